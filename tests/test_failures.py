"""The failure-line table: every sample a real program printed matches its own shape, and the
lines healthy runs print match none."""

from __future__ import annotations

import pytest

from tracelens.engine import parse
from tracelens.read.failures import SHAPES, TRIGGERS, failure_kind

SAMPLES = [(shape.kind, line) for shape in SHAPES for line in shape.samples]

HEALTHY = [
    "Process finished with exit code 0",
    "Process finished with exit code 130",  # stopped from the IDE (SIGINT)
    "vllm-server-1 exited with code 0",
    "vllm-server-1 exited with code 143",  # docker compose stop: SIGTERM
    "INFO 2025-11-04 09:12:44,118 proxy 10.0.0.3 7c1e2f0a-9b1d-4e55 -- POST /v1/chat/completions 200 812.4ms",
    "Job 'raysubmit_Xk2pQ9mN4vLr8sTw' succeeded",
    "Job 'raysubmit_Xk2pQ9mN4vLr8sTw' submitted successfully",
    "tests/test_compile.py::test_compiled_mlp PASSED                            [ 50%]",
    "========================= 3 passed, 1 warning in 4.21s =========================",
    "=============================== 12 passed in 0.53s ===============================",
    "collected 12 items / 1 deselected / 11 selected",
    "INFO 01-20 13:03:50 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000",
    'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "INFO:     Started server process [4155]",
    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:04<00:00, 15.2it/s]",
    "node-1:2345:2345 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "NCCL version 2.21.5+cuda12.4",
    "Successfully installed torch-2.5.1 triton-3.1.0 vllm-0.6.3",
    "  Building wheel for flash-attn (setup.py): finished with status 'done'",
    "/usr/bin/ld: warning: libcudart.so.11.0, needed by libfoo.so, may conflict with libcudart.so.12",
    "{'loss': 1.2345, 'grad_norm': 0.98, 'learning_rate': 2e-05, 'epoch': 0.5}",
    "Using `TRANSFORMERS_CACHE` is deprecated and will be removed in v5 of Transformers.",
    "Process exited normally with code 0",
    "torch.distributed.elastic.agent.server.api: [INFO] worker group successfully finished.",
    "Memory profiling takes 3.52 seconds; the current vLLM instance can use total_gpu_memory (79.10GiB) x gpu_memory_utilization (0.90) = 71.19GiB",
]


# The tables of samples are each one test listing every sample it fails on: a test a sample
# would cost xdist more than reading the line does.


def test_every_sample_matches_its_shape():
    wrong = [
        (kind, line, shape and shape.kind)
        for kind, line in SAMPLES
        if (shape := failure_kind(line)) is None or shape.kind != kind
    ]
    assert len(SAMPLES) > 100 and wrong == []


@pytest.mark.parametrize("line", HEALTHY)
def test_healthy_lines_match_no_shape(line):
    assert failure_kind(line) is None


def test_the_large_log_scanner_sees_every_sample():
    unseen = [
        (kind, line) for kind, line in SAMPLES if not any(t.decode() in line for t in TRIGGERS)
    ]
    assert unseen == []


def test_wrappers_are_marked():
    assert {s.kind for s in SHAPES if s.wrapper} == {
        "build",
        "died",
        "container-hook",
        "http",
        "tests",
        "ray-job",
        "server-start",
    }


def test_tritonserver_reports_the_model_error_logged_above_its_tables():
    """'error: creating server: ... failed to load all models' reports the model that did not
    load: the error-level line above the model and option tables is what failed (their rows
    are not counted in the distance)."""

    from tracelens.engine import parse_path
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.origin import Wrappers, find_failures

    log = _incident(
        "heldout-r257-02-tritonserver2310-trtllm050-gpt-model-path-no-engine-config-json-parse-error"
    )
    doc = parse_path(str(log))
    failures = find_failures(doc, Wrappers(default_rules().wrappers))
    assert failures.origin is None
    assert failures.reported is not None and failures.reported.line == 14
    assert "Failed to create instance" in failures.reported.text


# Logs whose only failure line is one of these shapes: with the rule that knows each left
# out, the log is still not reported healthy (an unrecognized failure quotes the line)
NO_RULE_NEEDED = [
    ("heldout-r25-22-deepspeed-chat-step3-init-actor-all-subprocesses-return-code-9", "killed"),
    ("heldout-r41-19-deepseek-vl2-small-loading-checkpoint-shards-bare-killed", "killed"),
    ("heldout-r25-19-llamafactory-cli-demo-34b-loading-shards-bash-killed", "killed"),
    ("heldout-r1-deepspeed-exit-7-docker-shm", "died"),
    ("heldout-r51-01-llamafactory-uv-sync-vllm-extra-py313-split-no-solution", "pip"),
    ("heldout-r87-03-k8s-tfjob-master-pod-evicted-node-low-on-memory", "evicted"),
    (
        "heldout-r27-22-kubectl-training-pod-evicted-ephemeral-storage-gcsfuse-sidecar-5gi",
        "evicted",
    ),
    (
        "heldout-r58-05-kserve-vllm-0111-tp4-large-model-liveness-probe-kills-during-weight-load",
        "evicted",
    ),
    # a symptom (an engine or scheduler that died) was the first diagnosis of these before
    ("heldout-r106-05-vllm-main-sleep-then-ipc-weight-update-segfault-engine-dead", "crash"),
    (
        "heldout-r107-04-vllm-024-nightly-rocm72-mi300x-tp8-expandable-segments-aiter-custom-allreduce-hipipcgetmemhandle",
        "cuda",
    ),
    (
        "heldout-r108-02-sglang-054-gb200-pd-decode-deepep-ll-nvshmem-ibgda-devx-uar-unprivileged-container",
        "nccl",
    ),
    # a router that answered every request 503 (its prefill workers' circuits open): the 503
    # reports the error it logged just above
    (
        "heldout-r252-04-sglang-router021-pd-prefill-circuit-breakers-open-no-available-prefill-workers",
        "level",
    ),
    # kubelet's "Back-off restarting failed container": the validator pod's container kept failing
    (
        "heldout-r265-02-gpu-operator-v24-9-driver-validation-nvidia-smi-rminitadapter-failed-one-gpu",
        "died",
    ),
    # a Rust panic: since Rust 1.73 its message is on the line after "panicked at FILE:L:C:"
    (
        "heldout-r125-03-sglang-router-014-startup-panic-cannot-drop-runtime-in-async-context",
        "crash",
    ),
]


@pytest.mark.parametrize("name,kind", NO_RULE_NEEDED)
def test_a_failure_line_alone_is_never_reported_healthy(name, kind):

    import yaml

    from tracelens.engine import parse_path
    from tracelens.models import ERROR_LEVEL
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.origin import Wrappers, find_failures
    from tracelens.rulebook.rank import evaluate

    log = _incident(name)
    own = yaml.safe_load(log.with_suffix(".expect.yaml").read_text())["top_rule"]
    rules = default_rules()
    doc = parse_path(str(log))
    failures = find_failures(doc, Wrappers(rules.wrappers))
    line = failures.origin or failures.reported  # a launcher's report when nothing else failed
    assert line is not None and line.kind == kind
    alarms = [d for d in evaluate(doc, rules, frozenset([own])) if d.severity in ERROR_LEVEL]
    assert alarms, f"{name} reads as healthy without {own}"
    assert not alarms[0].secondary, f"{name}: a symptom first without {own}"


def test_a_failure_line_that_ends_in_a_colon_takes_its_message_from_the_next_line():
    from tracelens import engine

    log = (
        "2025-06-01 10:00:00  INFO sglang_router_rs::server: starting server on 0.0.0.0:30000\n"
        "thread 'main' panicked at src/server.rs:210:14:\n"
        "called `Result::unwrap()` on an `Err` value: Os { code: 98, kind: AddrInUse }\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    top = engine.diagnose(log).diagnoses[0]
    assert top.rule_id == "unrecognized"
    assert "panicked at src/server.rs:210:14: called `Result::unwrap()`" in top.title


@pytest.mark.parametrize(
    ("line", "traceback", "error"),
    [
        # pybind11's form: read as a traceback (its exception, its At: frames)
        (
            'I0911 08:21:51.554457 1 pb_stub.cc:389] "Failed to initialize Python stub: '
            "ModuleNotFoundError: No module named 'cv2'\\n\\nAt:\\n  /models/m/1/model.py(5): <module>\\n\"",
            "ModuleNotFoundError",
            False,
        ),
        # no exception in it: still a failure line, whatever its level
        (
            "I0911 08:21:51.554457 1 pb_stub.cc:389] Failed to initialize Python stub: unable to load the model",
            None,
            True,
        ),
        # other shapes are not looked for at INFO: a line that only mentions an error
        (
            "I0911 08:21:51.554457 1 model.py:12] retrying after CUDA error: out of memory",
            None,
            False,
        ),
    ],
    ids=["triton-stub-exception", "triton-stub-other", "info-mention"],
)
def test_a_stub_failure_triton_logs_at_info_is_a_failure(line, traceback, error):
    from tracelens.engine import parse

    doc = parse("I0911 08:21:40.100000 1 server.cc:674] started\n" + line + "\n")
    types = [tb.segments[-1].exception.type for tb in doc.tracebacks if tb.segments[-1].exception]
    assert types == ([traceback] if traceback else [])
    assert bool(doc.errors) is error


def test_a_server_that_refused_every_request_is_not_healthy_without_a_rule():
    """Every chat request answered 400 (no chat template) and none answered: the server fails
    whatever it is sent, so with the rule that knows it left out the refusal is still named."""

    from tracelens.engine import parse_path
    from tracelens.models import ERROR_LEVEL
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.rank import evaluate

    log = _incident(
        "heldout-r41-21-vllm-085-vicuna-base-tokenizer-no-chat-template-every-chat-request-400"
    )
    doc = parse_path(str(log))
    diags = evaluate(doc, default_rules(), frozenset(["hf/chat-template-missing"]))
    first = diags[0]
    assert first.rule_id == "unrecognized" and first.severity in ERROR_LEVEL
    assert "default chat template is no longer allowed" in first.title


def _incident(name: str):
    """A log of corpus/incidents by its name without ``.log``."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "corpus" / "incidents" / f"{name}.log"


PEELED = [
    (shape.kind, line)
    for shape in SHAPES
    if shape.kind in ("pip", "build")
    for line in shape.samples
    if line.startswith("ERROR: ")
]


@pytest.mark.parametrize("kind,line", PEELED, ids=[f"{k}:{line[:40]}" for k, line in PEELED])
def test_pip_error_lines_keep_their_shape_after_the_level_is_peeled(kind, line):
    """pip prints its failures as "ERROR: ..."; the reader takes "ERROR: " off as the line's
    level, and the line must still be the failure of its shape (not a bare error-level line,
    which is never the origin)."""
    doc = parse(f"$ pip install vllm\n{line}\n")
    assert [(e.kind, e.level) for e in doc.errors] == [(kind, "ERROR")]
