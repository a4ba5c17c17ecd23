"""Fingerprints: the same failure from differently-prefixed, differently-numbered logs gets one
fingerprint; different failures get different ones."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose
from tracelens.incidents.signature import signature
from tracelens.parse.normalize import normalize

OOM_A = """\
(EngineCore_DP0 pid=245) INFO 01-20 13:03:40 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='/models/a', tensor_parallel_size=1
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] Traceback (most recent call last):
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 2810, in profile_run
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]     hidden_states = self._dummy_run(self.max_num_tokens)
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]   File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1773, in _wrapped_call_impl
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]     return self._call_impl(*args, **kwargs)
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]   File "/opt/venv/lib/python3.12/site-packages/vllm/model_executor/layers/activation.py", line 120, in forward_cuda
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700]     out = torch.empty(output_shape, dtype=x.dtype, device=x.device)
(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.05 GiB is free. Process 4155 has 78.13 GiB memory in use.
"""

# same failure: kubectl prefix + timestamps, other pids, other sizes, other line numbers, other GPU
OOM_B = "\n".join(
    f"[pod/vllm-1/vllm] 2025-09-14T08:02:31.88{k:04d}Z {line}"
    for k, line in enumerate(
        OOM_A.replace("pid=245", "pid=9120")
        .replace("2.00 GiB", "3.50 GiB")
        .replace("79.19 GiB", "139.80 GiB")
        .replace("1.05 GiB", "0.62 GiB")
        .replace("Process 4155", "Process 77")
        .replace("line 2810", "line 2904")
        .replace("/opt/venv/lib/python3.12", "/usr/local/lib/python3.11")
        .replace("GPU 0", "GPU 5")
        .splitlines()
    )
)

OTHER = """\
Traceback (most recent call last):
  File "/srv/app/data.py", line 40, in collate
    raise ValueError(f"sample length {n} exceeds max_len {max_len}")
ValueError: sample length 4133 exceeds max_len 4096
"""


def sig(text):
    rep = diagnose(text)
    return signature(rep.document, rep.diagnoses[0] if rep.diagnoses else None)


def test_same_failure_same_coarse_fingerprint():
    a, b = sig(OOM_A), sig(OOM_B)
    assert a.coarse == b.coarse, (a.coarse_text, b.coarse_text)


def test_different_failures_different_fingerprints():
    fault = OOM_B.replace(
        "CUDA out of memory", "CUDA error: an illegal memory access was encountered"
    )
    fault = fault.replace("OutOfMemoryError", "AcceleratorError")
    assert len({sig(OOM_A).coarse, sig(fault).coarse, sig(OTHER).coarse}) == 3


def test_clear_text_is_kept_and_skips_generic_frames():
    a = sig(OOM_A)
    assert "OutOfMemoryError" in a.coarse_text
    assert "_wrapped_call_impl" not in a.fine_text
    assert "forward_cuda" in a.coarse_text


def test_fine_fingerprint_separates_setups():
    a = sig(OOM_A)
    b = sig(OOM_A.replace("v0.11.0", "v0.12.0"))
    assert a.coarse == b.coarse and a.fine != b.fine


def test_healthy_log_has_no_signature():
    assert sig("INFO 01-20 13:03:40 [api_server.py:1] vLLM API server version 0.11.0\n") is None


@pytest.mark.parametrize(
    "text,expected",
    [
        ("request chatcmpl-8f2c9a1b4d failed", "request <id> failed"),
        ("at 2025-09-14T08:02:31.884Z", "at <ts>"),
        ("uuid 123e4567-e89b-12d3-a456-426614174000", "uuid <uuid>"),
        ("file /home/user/models/x.safetensors", "file <path>"),
        ("needs 16384 bytes", "needs <size>"),
    ],
)
def test_normalize(text, expected):
    assert normalize(text) == expected
