"""A failure a rule knows, printed only as a warning or below (an INFO stats line), that the
program carried on from (no failure anywhere in the log) did not stop the run: the diagnosis is
a warning. A line printed without a level, or one nothing came after, keeps its severity; an
answered health check is no sign of work."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose

WARNED = (
    "/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA "
    "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
    "yet initialized (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)"
)
PLAIN = "Error 802: system not yet initialized"
TRAINS = [
    f"{{'loss': 1.{k}, 'grad_norm': 0.8, 'learning_rate': 0.0001, 'epoch': 0.{k}}}"
    for k in range(4)
]


@pytest.mark.parametrize(
    ("lines", "severity"),
    [
        ([WARNED, *TRAINS], "warning"),  # warned, then trained
        ([WARNED], "fatal"),  # warned, and nothing after
        ([*TRAINS, WARNED], "fatal"),  # the progress was before it
    ],
    ids=["warned-then-trained", "warned-only", "progress-before"],
)
def test_a_warning_the_program_carried_on_from_is_no_failure(lines, severity):
    d = diagnose("\n".join(lines)).diagnoses
    hit = [x for x in d if x.rule_id == "system/fabric-manager-not-ready"]
    assert hit, [x.rule_id for x in d]
    assert hit[0].severity == severity


def test_only_a_warning_level_or_a_warnings_module_line_is_a_warning():
    from tracelens.models import Record
    from tracelens.parse.document import warning_record

    assert warning_record(Record(line=1, text=WARNED))
    assert warning_record(Record(line=1, text=PLAIN, level="WARNING"))
    assert warning_record(Record(line=1, text=PLAIN, level="INFO"))
    assert not warning_record(Record(line=1, text=PLAIN))
    assert not warning_record(Record(line=1, text=PLAIN, level="ERROR"))


STALLED = (
    "(APIServer pid=7) INFO 04-14 16:06:17 [loggers.py:259] Engine 000: Avg prompt throughput: "
    "0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 1 reqs, "
    "GPU KV cache usage: 0.0%, Prefix cache hit rate: 12.4%"
)
WORKED = (
    "(APIServer pid=7) INFO 04-14 16:06:{s} [loggers.py:259] Engine 000: Avg prompt throughput: "
    "1203.6 tokens/s, Avg generation throughput: 41.8 tokens/s, Running: 2 reqs, Waiting: 0 reqs, "
    "GPU KV cache usage: 3.1%, Prefix cache hit rate: 0.0%"
)
PROBE = '(APIServer pid=7) INFO:     127.0.0.1:{p} - "GET /health HTTP/1.1" 200 OK'


@pytest.mark.parametrize(
    ("after", "severity"),
    [
        ([WORKED.format(s=k) for k in (27, 37, 47)], "warning"),  # it worked again after
        ([PROBE.format(p=51000 + k) for k in range(6)], "error"),  # only health checks answered
    ],
    ids=["worked-after", "probes-only"],
)
def test_an_info_line_the_engine_worked_on_after_is_no_failure_but_probes_are_no_work(
    after, severity
):
    d = diagnose("\n".join([STALLED, *after])).diagnoses
    rule = "vllm/scheduler/waiting-request-larger-than-kv-cache-blocks-queue"
    hit = [x for x in d if x.rule_id == rule]
    assert hit, [x.rule_id for x in d]
    assert hit[0].severity == severity


TILED = "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding."
EXECUTED = ["Prompt executed in 353.18 seconds", "Prompt executed in 0:05:47"]


@pytest.mark.parametrize(
    ("lines", "severity"),
    [
        (["got prompt", TILED, EXECUTED[0]], "warning"),  # says it is a warning: handled
        (["got prompt", TILED, EXECUTED[1]], "warning"),
        (["got prompt", f"ERROR {TILED[len('Warning: ') :]}"], "error"),  # at error level
    ],
    ids=["seconds", "h-mm-ss", "error-level"],
)
def test_a_line_that_says_it_is_a_warning_is_one(lines, severity):
    """ComfyUI logs its tiled-decoding fallback with no level, as "Warning: ...": the program
    took it as a warning, not a failure (the prompt ran to its end)."""
    d = diagnose("\n".join(lines)).diagnoses
    hit = [x for x in d if x.rule_id == "torch/comfyui-vae-oom-retried-tiled"]
    assert hit, [x.rule_id for x in d]
    assert hit[0].severity == severity


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (
            "[INFO] [logging.py:96:log_dist] [Rank 0] step={k}0, skipped=3, lr=[9.6e-06], mom=[(0.9, 0.95)]",
            True,
        ),
        ("[INFO] [launch.py:351:main] Process 5{k}21 exits successfully.", True),
        ("Prompt executed in 1{k}.52 seconds", True),
        ("[INFO] [launch.py:351:main] Process 5{k}21 exits with return code = 1", False),
        ("[INFO] [timer.py:199:stop] epoch=0/micro_step={k}0", False),
        (
            "Training finished iteration 1{k} at 2024-03-05 11:02:10. Total running time: 1min",
            True,
        ),
        ("Trial train_fn_3f2a1_00001 finished iteration {k} at 2024-03-05 11:02:10.", True),
    ],
    ids=[
        "deepspeed-step",
        "launcher-exit-0",
        "comfyui-prompt",
        "launcher-exit-1",
        "timer",
        "ray-train-iteration",
        "ray-tune-iteration",
    ],
)
def test_lines_of_work_done_count_as_carrying_on(after, expected):
    """DeepSpeed's step lines (no loss in them), its launcher's exit-0 line per rank, ComfyUI's
    finished prompts and Ray Train's and Tune's reported iterations are progress after a failure
    line; a non-zero exit is not."""
    from tracelens.models import Record
    from tracelens.rulebook.progress import carried_on

    records = [Record(line=1, text="NCCL WARN NET/IB : Got async event : client reregistration")]
    records += [Record(line=2 + k, text=after.format(k=k)) for k in range(3)]
    assert carried_on(records, 1) is expected
