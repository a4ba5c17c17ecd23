"""Processes that print the same traceback at the same moment without a prefix (ranks of one
job sharing a terminal) interleave it line by line: every line N times in a row. The copies are
read as one traceback with its whole message, not as a header-only traceback followed by one
whose message stops at the second copy of the exception line."""

from __future__ import annotations

import pytest

from tracelens.engine import parse

FRAMES = [
    "Traceback (most recent call last):",
    '  File "/home/user/train.py", line 88, in <module>',
    "    main()",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 4159, in barrier',
    "    work = group.barrier(opts=opts)",
]
EXCEPTION = [
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
    "Last error:",
    "Error while creating shared memory segment /dev/shm/nccl-Ab12Cd (size 9637888)",
]


def interleaved(lines: list[str], copies: int) -> str:
    return "\n".join(line for line in lines for _ in range(copies)) + "\n"


@pytest.mark.parametrize("copies", [2, 3, 4])
def test_copies_are_one_traceback_with_its_whole_message(copies: int) -> None:
    doc = parse(interleaved(FRAMES + EXCEPTION, copies))
    assert len(doc.tracebacks) == 1
    tb = doc.tracebacks[0]
    assert tb.exception is not None
    assert tb.exception.message.splitlines()[-1] == EXCEPTION[-1]
    assert [f.function for f in tb.frames] == ["<module>", "barrier"]
    assert tb.start_line == 1


def test_copies_that_differ_in_the_exception_line_keep_each_exception_line() -> None:
    # ranks print their own rank in the message: the run of copies ends there
    text = interleaved(FRAMES, 2) + (
        "RuntimeError: NCCL communicator was aborted on rank 1.\n"
        "RuntimeError: NCCL communicator was aborted on rank 0.\n"
    )
    doc = parse(text)
    assert len(doc.tracebacks) == 1
    assert doc.tracebacks[0].exception.message == "NCCL communicator was aborted on rank 1."
    assert any("aborted on rank 0" in e.text for e in doc.errors)


@pytest.mark.parametrize(
    "text",
    [
        # a header alone twice (the first traceback cut off), then one whole traceback
        "\n".join([FRAMES[0], *FRAMES, EXCEPTION[0]]) + "\n",
        # one traceback, printed once
        "\n".join(FRAMES + EXCEPTION) + "\n",
        # two different tracebacks one after the other
        "\n".join(FRAMES + EXCEPTION[:1] + FRAMES[:3] + ["ValueError: bad"]) + "\n",
    ],
)
def test_no_copies_nothing_dropped(text: str) -> None:
    from tracelens.parse.interleave import unpaired
    from tracelens.parse.lexer import _openers
    from tracelens.read.logread import records_from_text

    records = records_from_text(text)
    assert unpaired(records, _openers(records)) is None
