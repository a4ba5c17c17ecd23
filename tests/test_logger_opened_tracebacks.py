"""A traceback whose first line carries a logger header and whose other lines carry none
(SGLang's "[time TP0] Scheduler hit an exception: Traceback ..."): its exception keeps its
whole message, and the next line with a header of its own is not part of it."""

from __future__ import annotations

import pytest

from tracelens.engine import parse

FRAMES = (
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1714, in run_scheduler_process\n'
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce\n'
    "    work = group.allreduce([tensor], opts)\n"
)
NCCL = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:81, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "Last error:\n"
    "Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)\n"
)
SIGQUIT = "[2025-03-10 09:14:22] Received sigquit from a child process. It usually means the child failed.\n"


def _head(tag: str) -> str:
    return f"[2025-03-10 09:14:22{tag}] Scheduler hit an exception: Traceback (most recent call last):\n"


@pytest.mark.parametrize(
    "log,stream,last_message_line",
    [
        # NCCL's "Last error:" block below the exception line is still its message
        (_head(" TP0") + FRAMES + NCCL, "TP0", "Error while creating shared memory segment"),
        (
            _head(" TP0") + FRAMES + NCCL + SIGQUIT,
            "TP0",
            "Error while creating shared memory segment",
        ),
        # a header without a process tag: the launcher's next line is not the message's
        (
            _head("") + FRAMES + "ValueError: dp_size must divide tp_size\n" + SIGQUIT,
            "",
            "ValueError: dp_size must divide tp_size",
        ),
    ],
    ids=["tp-tag", "tp-tag-then-sigquit", "no-tag-then-sigquit"],
)
def test_the_exception_keeps_its_message_and_only_it(log, stream, last_message_line):
    doc = parse(log)
    assert len(doc.tracebacks) == 1
    tb = doc.tracebacks[0]
    assert tb.stream == stream
    exc = tb.segments[-1].exception
    message = f"{exc.type}: {exc.message}".rstrip().splitlines()
    assert message[-1].startswith(last_message_line)
    assert not any("Received sigquit" in line for line in message)
