"""Which files are logs: decided from their first bytes, never from their names. Every log of
the corpus is one; what is clearly something else is skipped with what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiers import sample

from tracelens.fleet.sniff import HEAD, not_a_log

ROOT = Path(__file__).resolve().parent.parent
CORPUS_LOGS = sample(
    sorted(
        p
        for p in (ROOT / "corpus").rglob("*")
        if p.is_file() and not p.name.endswith(".expect.yaml") and "collect-env" not in p.name
    )
)

COLLECT_ENV = """Collecting environment information...
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
GPU models and configuration:
GPU 0: NVIDIA H100 80GB HBM3

Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.5.1
[conda] Could not collect
"""
YAML_CONFIG = """# serving config
model: meta-llama/Llama-3.1-8B-Instruct
tensor_parallel_size: 2
log_level: INFO
max_model_len: 8192
extra:
  - --enforce-eager
"""
JSON_CONFIG = json.dumps(
    {"architectures": ["LlamaForCausalLM"], "torch_dtype": "bfloat16", "log_level": "ERROR"},
    indent=2,
)


@pytest.mark.parametrize(
    "content,reason",
    [
        (b"", "empty"),
        (b"\n  \n\t\n", "blank (only whitespace)"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "a PNG image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(300), "a JPEG image"),
        (b"PK\x03\x04\x14\x00" + bytes(64), "a zip archive"),
        (b"\x7fELF\x02\x01\x01" + bytes(64), "an executable (ELF)"),
        (b"SQLite format 3\x00" + bytes(100), "an SQLite database"),
        (bytes(range(256)) * 16, "binary data"),
        (b"torch==2.5.1\nvllm>=0.6.3\n# pinned\nnumpy<2\n", "a requirements list"),
        (b"-r base.txt\nflash-attn @ https://example.org/fa.whl\n", "a requirements list"),
        (b"HOME=/root\nPATH=/usr/bin:/bin\nCUDA_VISIBLE_DEVICES=0,1\n", "environment variables"),
        (b"export HF_HOME=/data/hf\nexport NCCL_DEBUG=INFO\n", "environment variables"),
        (COLLECT_ENV.encode(), "a PyTorch environment report"),
        (JSON_CONFIG.encode(), "a JSON document"),
        (YAML_CONFIG.encode(), "a YAML document"),
        (b"# only a comment\n", "only comments"),
    ],
    ids=lambda v: v if isinstance(v, str) else "content",
)
def test_what_is_not_a_log_is_named(content, reason):
    found = not_a_log(content[:HEAD], len(content))
    assert found is not None and found.startswith(reason)


@pytest.mark.parametrize(
    "content",
    [
        b"INFO 09-11 06:20:31 [__init__.py:241] Automatically detected platform cuda.\n",
        b"2025-07-01T05:05:58.411Z starting\n",
        b"vllm-1  | (APIServer pid=1) INFO 09-11 06:20:35 server version 0.10.1\n",
        b'{"time": "2025-01-01T00:00:00Z", "level": "error", "msg": "boom"}\n{"msg": "x"}\n',
        b"time=2025-01-01T00:00:00Z level=error msg=boom\n",
        b'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nKeyError: 1\n',
        b"model: llama\nRuntimeError: CUDA error: out of memory\n",  # YAML-like, but it failed
        b"Killed\n",
        b"step: 1 loss: 2.31\nstep: 2 loss: 2.29\n",  # not a YAML mapping
        b"[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n",
        b"-- The C compiler identification is GNU 11.4.0\n-- Detecting C compiler ABI info\n",
        b"\xef\xbb\xbfINFO started with a byte order mark\n",
        "INFO started in UTF-16\r\n".encode("utf-16"),
        b"worker started\nbinary garbage: \xff\xfe\xc3( \x00\x00 end\nERROR: boom\n",
    ],
)
def test_logs_are_logs_whatever_their_shape(content):
    assert not_a_log(content[:HEAD], len(content)) is None


def test_a_large_text_file_is_a_log_whatever_its_first_bytes():
    # only the head is read: a long log may start with a configuration dump
    head = JSON_CONFIG.encode().ljust(HEAD, b" ")
    assert not_a_log(head, HEAD * 4) is None
    assert not_a_log(head, len(JSON_CONFIG)) == "a JSON document"


def test_every_corpus_log_is_a_log():
    refused = {}
    for path in CORPUS_LOGS:
        data = path.read_bytes()
        if (what := not_a_log(data[:HEAD], len(data))) is not None:
            refused[str(path.relative_to(ROOT / "corpus"))] = what
    assert CORPUS_LOGS and refused == {}


@pytest.mark.parametrize("path", sorted((ROOT / "corpus").rglob("*collect-env*.log")), ids=str)
def test_environment_reports_of_the_corpus_are_not_logs(path):
    data = path.read_bytes()
    assert not_a_log(data[:HEAD], len(data)) == "a PyTorch environment report (collect_env output)"
