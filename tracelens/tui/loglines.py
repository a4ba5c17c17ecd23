"""The lines of the log reader (:mod:`tracelens.tui.screens.logview`): each with its number,
process and level, built from a log's records; and how a process is named in a narrow column."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len

from tracelens.models import Document, ErrorLine, Record, Traceback
from tracelens.pyregex import compile_re
from tracelens.read.logread import records_from_bytes

LEVEL_RANK = {
    "TRACE": 0,
    "DEBUG": 0,
    "INFO": 1,
    "NOTICE": 1,
    "WARNING": 2,
    "ERROR": 3,
    "CRITICAL": 4,
    "FATAL": 4,
}
"""A record's level (as the reader names it) -> how severe; a line without one inherits the
level of the line before it in its process (a message's continuation lines, a traceback under
an ERROR line)."""
LEVEL_MARK = ("D", "I", "W", "E", "F")
FILTERS = (("all levels", 0), ("warning+", 2), ("error+", 3))
"""What ``l`` cycles through: a name and the least level shown (evidence lines always are)."""
PROCESS_WIDTH = 14
"""Cells of the process column at most (the full name is in the status line)."""
PALETTE = ("cyan", "magenta", "green", "blue", "yellow", "bright_cyan", "bright_magenta", "red")
"""Colours of the process column, one per process in order of appearance."""
_PID = compile_re(r"[ ,]*\b(?:pid|ip)=[\w.:]+")


@dataclass(slots=True)
class LogLine:
    """One line of the reader."""

    number: int
    """The line number in the log; 0 for a marker of lines that are not there."""
    text: str
    process: str = ""
    level: int = 1
    evidence: bool = False


def width(text: str) -> int:
    """Terminal cells of a line (``len`` for ASCII, the common case, which is much faster)."""
    return len(text) if text.isascii() else cell_len(text)


def short_process(name: str) -> str:
    """A process name for the narrow column: ``Worker_TP7 pid=48537`` -> ``Worker_TP7``,
    ``trainer-1 / rank2`` -> ``rank2``.

    >>> short_process("Worker_TP7 pid=48537"), short_process("trainer-1 / rank2")
    ('Worker_TP7', 'rank2')
    """
    short = _PID.sub("", name).strip(" ,()").rsplit(" / ", 1)[-1] or name
    return short if len(short) <= PROCESS_WIDTH else short[: PROCESS_WIDTH - 1] + "…"


def _copy_spans(
    records: Sequence[Record], tracebacks: Sequence[Traceback]
) -> list[tuple[int, int, set[str]]]:
    """The lines of every printed copy of each traceback: (first, last, its process). The parser
    keeps one copy of a traceback that several processes printed and where each copy starts
    (:mod:`tracelens.parse.fold`); a later copy is as many lines of its own process as the first
    one, however other processes' lines are interleaved with it. A copy whose first line is not
    among the records (a stored excerpt) is left out."""
    by_stream: dict[str, list[int]] = {}
    stream_of: dict[int, str] = {}
    if any(len(tb.lines) > 1 for tb in tracebacks):
        for rec in records:
            by_stream.setdefault(rec.stream, []).append(rec.line)
            stream_of[rec.line] = rec.stream
    spans = []
    for tb in tracebacks:
        if tb.end_line < tb.start_line:
            continue
        if len(tb.lines) < 2:
            spans.append((tb.start_line, tb.end_line, set(tb.streams or [tb.stream])))
            continue
        spans.append((tb.start_line, tb.end_line, {tb.stream}))
        own = by_stream.get(tb.stream, [])
        size = bisect_right(own, tb.end_line) - bisect_left(own, tb.start_line)
        for start in tb.lines[1:]:
            stream = stream_of.get(start)
            lines = by_stream.get(stream, []) if stream is not None else []
            k = bisect_left(lines, start)
            if stream is not None and size and k < len(lines) and lines[k] == start:
                spans.append((start, lines[min(k + size, len(lines)) - 1], {stream}))
    return spans


def build_lines(
    records: Iterable[Record],
    evidence: Iterable[int] = (),
    tracebacks: Sequence[Traceback] = (),
    errors: Sequence[ErrorLine] = (),
    line_count: int = 0,
) -> list[LogLine]:
    """The reader's lines from a log's records (their text is clean already: the reader
    removed control sequences, :func:`tracelens.read.logread.clean`): levels inherited along each process, the lines
    of tracebacks and error lines raised to error, and a marker where lines are missing (a
    stored excerpt, or a large log read only around its trouble)."""
    marked = set(evidence)
    severe = {e.line for e in errors}
    records = list(records)
    spans = _copy_spans(records, tracebacks)
    spans.sort(key=lambda s: s[0])
    starts = [s[0] for s in spans]
    last: dict[str, int] = {}
    out: list[LogLine] = []
    prev = 0
    for rec in records:
        if rec.line > prev + 1:
            out.append(LogLine(0, f"… lines {prev + 1}-{rec.line - 1} are not kept", level=1))
        prev = max(prev, rec.line)
        level = LEVEL_RANK.get(rec.level or "", -1)
        if level < 0:
            level = last.get(rec.stream, 1)
        else:
            last[rec.stream] = level
        if rec.line in severe:
            level = max(level, 3)
        k = bisect_right(starts, rec.line)
        while k > 0 and level < 3:
            k -= 1
            lo, hi, streams = spans[k]
            if hi >= rec.line and rec.stream in streams:
                level = 3
            if starts[k] < rec.line - 2000:  # tracebacks that far above cannot reach here
                break
        text = rec.text if "\t" not in rec.text else rec.text.expandtabs(8)
        out.append(LogLine(rec.line, text, rec.stream, level, rec.line in marked))
    if line_count > prev:
        out.append(LogLine(0, f"… lines {prev + 1}-{line_count} are not kept", level=1))
    return out


WHOLE_FILE_LIMIT = 32 << 20
"""Bytes of a large log's file read again for the reader (about two seconds of reading)."""


def whole_records(doc: Document) -> list[Record] | None:
    """Every line of a log that was parsed only around its trouble (a log larger than the
    size parsed whole): its file read again, the parsed lines kept as they are; ``None`` when
    the log was parsed whole, or its file is gone, changed, larger than
    :data:`WHOLE_FILE_LIMIT` or not UTF-8."""
    if doc.full_parse or doc.encoding != "utf-8" or doc.size > WHOLE_FILE_LIMIT:
        return None
    path = Path(doc.source)
    try:
        if not path.is_file() or path.stat().st_size != doc.size:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    parsed: dict[int, list[Record]] = {}
    for rec in doc.records:
        parsed.setdefault(rec.line, []).append(rec)
    out: list[Record] = []
    taken = 0  # the line last taken from the parsed records (its other segments are skipped)
    for rec in records_from_bytes(data):
        if rec.line == taken:
            continue
        kept = parsed.pop(rec.line, None)
        if kept is None:
            out.append(rec)
        else:
            out.extend(kept)
            taken = rec.line
    return out
