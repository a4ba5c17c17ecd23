"""The same traceback printed by several processes (every rank of a job, every worker of a
server) -> one traceback that lists every process and every copy.

What makes two printed tracebacks the same failure is :func:`fold_key`: the same kind, the same
frames (file, line, function) and the same exception types in every chained segment, the
quoted (nested) tracebacks the same too, and the messages the same once what varies from one
process to the next is normalized (:func:`tracelens.parse.normalize.normalize`: rank and device
numbers, pids, addresses, sizes, paths such as a per-rank ``/dev/shm/nccl-Zp02Rw`` segment).
A different frame, exception type or message word is a different failure.

Folding keeps the first copy as printed, so what quotes it (a diagnosis's evidence) quotes the
first copy's real lines.

>>> from tracelens.models import ExceptionInfo, Frame, Segment, Traceback
>>> def tb(rank, message, line):
...     frame = Frame(file="train.py", lineno=9, function="main")
...     seg = Segment(frames=[frame], exception=ExceptionInfo(type="RuntimeError", message=message))
...     return Traceback(segments=[seg], start_line=line, stream=f"rank{rank}")
>>> one, = fold([tb(0, "NCCL error on GPU 0", 3), tb(1, "NCCL error on GPU 1", 8)])
>>> one.streams, one.lines, one.exception.message
(['rank0', 'rank1'], [3, 8], 'NCCL error on GPU 0')
>>> len(fold([tb(0, "NCCL error on GPU 0", 3), tb(1, "CUDA error on GPU 1", 8)]))
2
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tracelens.models import Traceback
from tracelens.parse.normalize import normalize
from tracelens.regex import compile_regex


def fold_key(tb: Traceback) -> tuple:
    """What two tracebacks share when they are copies of one failure (see the module's
    docstring). Stream and log lines are not part of it: they are what the copies differ in."""
    return _shape(tb), _normalized(_messages(tb))


def _shape(tb: Traceback) -> tuple:
    """The key less the messages: kind, and each segment's link, frames, exception type and
    quoted tracebacks."""
    return tb.kind, tuple(
        (
            seg.link,
            tuple((f.file, f.lineno, f.function) for f in seg.frames),
            seg.exception.type if seg.exception else None,
            tuple(fold_key(sub) for sub in seg.exception.nested) if seg.exception else (),
        )
        for seg in tb.segments
    )


def _messages(tb: Traceback) -> tuple[str | None, ...]:
    return tuple(seg.exception.message if seg.exception else None for seg in tb.segments)


def _normalized(
    messages: tuple[str | None, ...], lines: dict[str, str] | None = None
) -> tuple[str | None, ...]:
    """The messages normalized. With ``lines`` (a cache of normalized lines kept for one fold),
    a message is normalized line by line, each line once: the copies printed by several ranks
    share most of their lines, and the result is the same (no pattern of :func:`normalize`
    matches across a line break but a size whose unit starts the next line, and then the message
    is normalized whole)."""
    if lines is None:
        return tuple(None if m is None else normalize(m) for m in messages)
    return tuple(None if m is None else _by_line(m, lines) for m in messages)


_SIZE_ACROSS_LINES = compile_regex(r"\d\n(?:[KMGTP]i?B|byte)")


def _by_line(message: str, lines: dict[str, str]) -> str:
    """``normalize(message)``, each line looked up in ``lines`` first.

    >>> message = "CUDA error on GPU 3\\nLast error:\\n\\nsegment /dev/shm/nccl-Zp02Rw"
    >>> _by_line(message, {}) == normalize(message) == "CUDA error on GPU <n> Last error: segment <path>"
    True
    """
    if "\n" not in message or _SIZE_ACROSS_LINES.search(message):
        return normalize(message)
    out: list[str] = []
    for line in message.split("\n"):
        normalized = lines.get(line)
        if normalized is None:
            normalized = lines[line] = normalize(line)
        if normalized:
            out.append(normalized)
    return " ".join(out)


@dataclass
class _SameShape:
    """The tracebacks of one shape folded so far, found by their messages as printed and, once
    a second traceback of the shape came, as normalized."""

    by_message: dict[tuple, Traceback]
    by_normalized: dict[tuple, Traceback] | None = None


def fold(tracebacks: Iterable[Traceback]) -> list[Traceback]:
    """Copies of one failure as one traceback each, in order of first print: the first copy,
    with :attr:`~tracelens.models.Traceback.streams` (every process that printed it, each once,
    in order of first print) and :attr:`~tracelens.models.Traceback.lines` (where each copy
    starts, in print order). Tracebacks folded before (a stored document) fold again into the
    same result.

    The result is that of grouping by :func:`fold_key`; messages are normalized only where a
    traceback has the shape of an earlier one and a message as printed that no earlier one had
    (normalizing is most of the key's cost), and each distinct message line once."""
    shapes: dict[tuple, _SameShape] = {}
    lines: dict[str, str] = {}
    out: list[Traceback] = []
    for tb in tracebacks:
        shape, messages = _shape(tb), _messages(tb)
        same = shapes.get(shape)
        first = None
        if same is None:
            shapes[shape] = _SameShape({messages: tb})
        else:
            first = same.by_message.get(messages)
            if first is None:
                if same.by_normalized is None:
                    same.by_normalized = {
                        _normalized(m, lines): t for m, t in same.by_message.items()
                    }
                normalized = _normalized(messages, lines)
                first = same.by_normalized.setdefault(normalized, tb)
                same.by_message[messages] = first
                if first is tb:
                    first = None
        if first is None:
            tb.streams = list(tb.streams or [tb.stream])
            tb.lines = list(tb.lines or [tb.start_line])
            out.append(tb)
            continue
        for stream in tb.streams or [tb.stream]:
            if stream not in first.streams:
                first.streams.append(stream)
        first.lines.extend(tb.lines or [tb.start_line])
    return out
