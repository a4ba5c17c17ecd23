"""A failure the program carried on after is downgraded to a warning (it was handled); one that
killed a thread the engine cannot run without is not, whatever was answered after it."""

from __future__ import annotations

import pytest

from tracelens.engine import parse
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.origin import Wrappers, find_origin

ANSWERED = "\n".join(
    f'(APIServer pid=1) INFO:     10.0.0.{k}:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
    for k in range(5)
)


def _log(thread: str) -> str:
    return "\n".join(
        [
            "(APIServer pid=1) INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.13.0",
            f"(EngineCore_DP0 pid=9) Exception in thread Thread-5 ({thread}):",
            "(EngineCore_DP0 pid=9) Traceback (most recent call last):",
            '(EngineCore_DP0 pid=9)   File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
            "(EngineCore_DP0 pid=9)     self.run()",
            "(EngineCore_DP0 pid=9) AssertionError: Expected a cached item for mm_hash='x'",
            ANSWERED,
        ]
    )


@pytest.mark.parametrize(
    ("thread", "recovered"),
    [
        ("process_input_sockets", False),  # no new request reaches the engine any more
        ("process_output_sockets", False),
        ("_report_usage_worker", True),  # a helper thread: the server carried on
    ],
)
def test_a_dead_engine_io_thread_is_never_carried_on_after(thread, recovered):
    origin, carried_on = find_origin(parse(_log(thread)), Wrappers(default_rules().wrappers))
    assert origin is not None and "AssertionError" in origin.text
    assert carried_on is recovered


@pytest.mark.parametrize(
    ("progress", "recovered"),
    [
        # detectron2: the loss is part of each name
        (
            "[01/01 10:13:52 d2.utils.events]:  eta: 1 day, 2:11:07  iter: {k}  total_loss: 2.1  loss_cls: 0.8",
            True,
        ),
        ("{{'loss': 0.71, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {k}}}", True),
        ("Epoch {k}: 100%|##########| 50/50 [00:10<00:00]", False),  # no loss: not progress
    ],
    ids=["detectron2", "hf-trainer", "no-loss"],
)
def test_training_progress_after_a_warning_is_carrying_on(progress, recovered):
    log = "\n".join(
        [
            "node-a:1379562:1379562 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
            "node-a:1379562:1379562 [0] NCCL INFO Using network Socket",
            *(progress.format(k=k) for k in (19, 39, 59)),
        ]
    )
    origin, carried_on = find_origin(parse(log), Wrappers(default_rules().wrappers))
    assert origin is not None and "NCCL WARN" in origin.text
    assert carried_on is recovered


def _controller_log(worker_lines: list[str], tail: str) -> str:
    """Ray Train v2: the controller logs a retried startup timeout, goes on printing its own
    lines (read as more of the exception's message), and the workers' lines come between."""
    ctl = "(TrainController pid=7) "
    return "\n".join(
        [
            ctl + "Traceback (most recent call last):",
            ctl + '  File "/srv/ray/train/v2/worker_group.py", line 298, in _start_impl',
            ctl + "    raise WorkerGroupStartupTimeoutError(",
            ctl + "ray.train.v2._internal.exceptions.WorkerGroupStartupTimeoutError: "
            "The worker group startup timed out after 30.0 seconds waiting for 4 workers.",
            ctl + "[State Transition] SCHEDULING -> RESCHEDULING.",
            ctl + "Started training worker group of size 4: ",
            *worker_lines,
            ctl + tail,
        ]
    )


@pytest.mark.parametrize(
    ("worker_lines", "recovered"),
    [
        # another process trained while the failing one's message went on: carried on
        (
            [f"(RayTrainWorker pid=11) epoch {k}: train_loss=1.{k} val_acc=0.5" for k in range(3)],
            True,
        ),
        # the same words from the failing process itself are still its message: not seen
        ([f"(TrainController pid=7) epoch {k}: train_loss=1.{k}" for k in range(3)], False),
        # a worker that failed too is no witness of progress
        (
            [f"(RayTrainWorker pid=11) epoch {k}: train_loss=1.{k}" for k in range(3)]
            + ["(RayTrainWorker pid=11) RuntimeError: CUDA error: an illegal memory access"],
            False,
        ),
    ],
    ids=["worker-trains", "same-process", "worker-failed"],
)
def test_progress_of_another_process_during_a_long_message_is_carrying_on(worker_lines, recovered):
    log = _controller_log(worker_lines, "[State Transition] RUNNING -> FINISHED.")
    origin, carried_on = find_origin(parse(log), Wrappers(default_rules().wrappers))
    assert origin is not None and "WorkerGroupStartupTimeoutError" in origin.text
    assert carried_on is recovered
