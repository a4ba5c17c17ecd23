"""A run that hung until someone stopped it: Ctrl-C (a ``KeyboardInterrupt`` traceback) while
the program still waited in a call that never returns when its peers or its service do not
answer (the distributed rendezvous, a process group's first collective, a Ray placement group,
a Hub download), with no progress before it. Such a log holds no error at all, yet the run
failed: the interrupted call is where it hung.

A run stopped after it made progress (a server that finished starting, training steps) is a
stop, not a hang, whatever it was doing at that moment."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tracelens.models import Document, Frame, Traceback
from tracelens.pyregex import compile_re
from tracelens.rulebook.origin import Origin
from tracelens.rulebook.progress import made_progress


@dataclass(frozen=True)
class Hang:
    """Where an interrupted run was waiting."""

    traceback: Traceback
    frame: Frame
    """The innermost frame of the call it waited in."""
    category: str
    """What such a hang most often is (the taxonomy's category)."""


@cache
def _waits() -> tuple[tuple[re.Pattern[str], re.Pattern[str] | None, str], ...]:
    """(module, function or None for any, category) of the calls a run hangs in."""
    return (
        # the c10d store every rank connects to, process groups and their collectives
        (
            compile_re(
                r"^torch\.distributed\.(?:rendezvous|distributed_c10d|c10d_logger|"
                r"elastic\.rendezvous\.|elastic\.utils\.store)"
            ),
            None,
            "nccl-error",
        ),
        (
            compile_re(r"^(?:vllm|sglang\.srt)\.distributed\.|^deepspeed\.comm\."),
            None,
            "nccl-error",
        ),
        # a placement group the cluster cannot place never becomes ready
        (
            compile_re(r"^ray\.util\.placement_group$"),
            compile_re(r"^(?:ready|wait)$"),
            "ray-cluster",
        ),
        (
            compile_re(r"\.executor\.ray_utils$"),
            compile_re(r"^_wait_until_pg_ready$"),
            "ray-cluster",
        ),
        (compile_re(r"^huggingface_hub\."), None, "model-access"),
    )


def _in_step(module: str) -> bool:
    """A training step's backward pass (torch.autograd): a collective inside one is a step in
    progress."""
    return module == "torch.autograd" or module.startswith("torch.autograd.")


def _waiting(frames: list[Frame]) -> tuple[Frame, str] | None:
    for frame in reversed(frames):  # innermost first
        module = frame.module or ""
        for mod, func, category in _waits():
            if mod.search(module) and (func is None or func.search(frame.function or "")):
                return frame, category
    return None


def interrupted_wait(doc: Document, stop: int) -> Hang | None:
    """Where the run hung, when it was stopped (at line ``stop``) by a Ctrl-C that interrupted
    one of the waits above, with no progress before it; None otherwise."""
    tb = next(
        (
            t
            for t in doc.tracebacks
            if t.exception is not None and t.exception.type.endswith("KeyboardInterrupt")
        ),
        None,
    )
    if tb is None or any(_in_step(f.module or "") for f in tb.frames):
        return None
    found = _waiting(tb.frames)
    if found is None:
        return None
    first = min(stop, tb.start_line)
    if made_progress([rec for rec in doc.records if rec.line < first]):
        return None
    return Hang(tb, found[0], found[1])


def hung_origin(doc: Document, stop: int) -> Origin | None:
    """The originating failure of a run stopped at line ``stop`` while it hung (the interrupted
    traceback's exception line, raised in the frame it waited in), or None."""
    hang = interrupted_wait(doc, stop)
    if hang is None:
        return None
    tb, exc = hang.traceback, hang.traceback.exception
    assert exc is not None  # interrupted_wait takes a traceback that ends in KeyboardInterrupt
    text = next((rec.text for rec in doc.records if rec.line == exc.line), exc.type)
    return Origin(
        exc.line,
        text,
        tb.stream,
        "hang",
        exc.type,
        "",
        hang.frame,
        tb.start_line,
        max(exc.end_line, exc.line),
        hang=hang,
    )
