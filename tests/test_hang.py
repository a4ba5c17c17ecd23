"""A run stopped while it hung (tracelens.rulebook.hang): a Ctrl-C that interrupted a wait that
never returns, with no progress before it, is a failure, named where it waited; a run stopped
after it made progress, or interrupted anywhere else, is a stop."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose
from tracelens.rulebook.load import default_rules

SP = "/opt/conda/lib/python3.11/site-packages"
LAUNCH = (
    "$ torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint node-a:29500 train.py\n"
    "W1203 10:02:11.418000 4121 torch/distributed/run.py:793] *****************************************\n"
    "[rank0]: world size 16, initializing process group\n"
)
STOP = (
    "^CW1203 10:31:44.002000 4121 torch/distributed/elastic/agent/server/api.py:704] "
    "Received Signals.SIGINT death signal, shutting down workers\n"
)


def _tb(*frames: tuple[str, int, str, str]) -> str:
    out = "[rank0]: Traceback (most recent call last):\n"
    out += (
        '[rank0]:   File "/home/user/project/train.py", line 52, in <module>\n[rank0]:     main()\n'
    )
    for path, lineno, func, src in frames:
        out += f'[rank0]:   File "{path}", line {lineno}, in {func}\n[rank0]:     {src}\n'
    return out + "[rank0]: KeyboardInterrupt\n"


RENDEZVOUS = _tb(
    ("/home/user/project/train.py", 21, "main", 'dist.init_process_group(backend="nccl")'),
    (
        f"{SP}/torch/distributed/distributed_c10d.py",
        1710,
        "init_process_group",
        "store, rank, world_size = next(rendezvous_iterator)",
    ),
    (f"{SP}/torch/distributed/rendezvous.py", 189, "_create_c10d_store", "return TCPStore("),
)
PLACEMENT = _tb(
    ("/home/user/project/train.py", 30, "main", "ray.get(pg.ready())"),
    (f"{SP}/ray/_private/auto_init_hook.py", 21, "auto_init_wrapper", "return fn(*args, **kwargs)"),
    (f"{SP}/ray/util/placement_group.py", 98, "wait", "return len(ready) == 1"),
)
DOWNLOAD = _tb(
    ("/home/user/project/train.py", 12, "main", "snapshot_download(repo_id=MODEL)"),
    (f"{SP}/huggingface_hub/_snapshot_download.py", 296, "snapshot_download", "thread_map("),
    (
        f"{SP}/huggingface_hub/file_download.py",
        1010,
        "hf_hub_download",
        "with WeakFileLock(lock_path):",
    ),
    (f"{SP}/filelock/_api.py", 332, "acquire", "time.sleep(poll_interval)"),
)
SLEEP = _tb(("/home/user/project/train.py", 40, "main", "time.sleep(60)"))
STEP = _tb(
    ("/home/user/project/train.py", 44, "main", "loss.backward()"),
    (f"{SP}/torch/autograd/__init__.py", 347, "backward", "_engine_run_backward("),
    (f"{SP}/torch/distributed/distributed_c10d.py", 2501, "all_reduce", "work.wait()"),
)


def _diagnose(text: str):
    return diagnose(text.encode(), default_rules(), source="hang.log").diagnoses


@pytest.mark.parametrize(
    "tb,category,where",
    [
        (RENDEZVOUS, "nccl-error", "_create_c10d_store"),
        (PLACEMENT, "ray-cluster", "wait (ray.util.placement_group)"),
        (DOWNLOAD, "model-access", "hf_hub_download"),
    ],
)
def test_a_run_interrupted_while_it_hung_is_a_failure_named_where_it_waited(tb, category, where):
    diags = _diagnose(LAUNCH + STOP + tb)
    assert diags, "a hang interrupted by Ctrl-C is no healthy run"
    first = diags[0]
    assert (first.rule_id, first.category, first.severity) == ("unrecognized", category, "error")
    assert where in first.title and "hung" in first.title
    ki = (LAUNCH + STOP + tb).splitlines().index("[rank0]: KeyboardInterrupt") + 1
    assert ki in [e.line for e in first.evidence]


@pytest.mark.parametrize(
    "before,tb",
    [
        # training steps before the Ctrl-C: the user stopped a run that worked
        ("[rank0]: step 100 | loss 2.314 | lr 3e-4\n" * 3, RENDEZVOUS),
        ("", SLEEP),  # interrupted in the user's own code: no wait that hangs
        ("", STEP),  # a collective inside a backward pass: a step in progress
    ],
)
def test_a_stop_that_is_no_hang_stays_silent(before, tb):
    assert [d for d in _diagnose(LAUNCH + before + STOP + tb) if d.severity == "error"] == []


def test_a_rule_that_knows_the_hang_keeps_its_diagnosis_first():
    # pynccl's collective at start-up: nccl/collective-hang-interrupted knows it
    tb = _tb(
        (
            f"{SP}/vllm/distributed/device_communicators/pynccl.py",
            99,
            "__init__",
            "self.all_reduce(data)",
        ),
        (
            f"{SP}/vllm/distributed/device_communicators/pynccl_wrapper.py",
            290,
            "ncclAllReduce",
            "self.NCCL_CHECK(",
        ),
    )
    diags = _diagnose(LAUNCH + STOP + tb)
    assert diags[0].rule_id == "nccl/collective-hang-interrupted"
    assert all(d.rule_id != "unrecognized" for d in diags)
