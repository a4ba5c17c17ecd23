"""records -> document: demultiplex streams, parse tracebacks per stream, fold fan-out copies,
collect error lines and facts.

>>> from tracelens.read.logread import records_from_text
>>> doc = build(records_from_text("(Worker_TP0 pid=1) ERROR 01-20 13:03:50 [a.py:1] ValueError: x"))
>>> [(e.kind, e.text) for e in doc.errors]
[('exception', 'ValueError: x')]
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterator
from functools import cache

from tracelens import facts as facts_mod
from tracelens.models import (
    Document,
    ErrorLine,
    ExceptionInfo,
    Frame,
    Record,
    Segment,
    StreamInfo,
    Traceback,
)
from tracelens.parse.fold import fold
from tracelens.parse.lexer import EXCEPTION_LINE, NEW_OUTPUT
from tracelens.parse.marks import PROMPT, exit_status
from tracelens.parse.pybindtb import STUB, stub_traceback
from tracelens.parse.traceback import parse_records
from tracelens.pyregex import compile_re
from tracelens.read.failures import SHAPES, failure_kind

ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "FATAL"})
"""The logger levels of a record that logs an error."""
_QUIET_LEVELS = frozenset({"TRACE", "DEBUG", "INFO"})
_QUIET_HINTS = tuple(s.quiet_hint for s in SHAPES if s.quiet_hint)
"""A line the log itself marks as informational is never an error line (request logging
quotes users' prompts, which may contain any error text)."""


def build(
    records: list[Record],
    *,
    source: str = "-",
    size: int = 0,
    line_count: int | None = None,
    full_parse: bool = True,
    encoding: str = "utf-8",
) -> Document:
    """Parse records into a :class:`Document`."""
    by_stream: dict[str, list[Record]] = defaultdict(list)
    for rec, stream in zip(records, _streams(records)):
        by_stream[stream].append(rec)

    streams = [
        StreamInfo(id=sid, records=len(recs), first_line=recs[0].line, last_line=recs[-1].line)
        for sid, recs in by_stream.items()
    ]

    tracebacks: list[Traceback] = []
    covered: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for sid, recs in by_stream.items():
        for tb in parse_records(recs):
            tb.stream = sid
            tracebacks.append(tb)
            covered[sid].append((tb.start_line, tb.end_line))
    for rec in records:  # a Python exception a C++ program logged on one line (Triton's stub)
        if STUB in rec.text and (stub := stub_traceback(rec)) is not None:
            tracebacks.append(stub)
            covered[rec.stream].append((rec.line, rec.line))
    tracebacks.sort(key=lambda t: t.start_line)
    tracebacks = fold(tracebacks)

    errors = list(_error_lines(records, covered))
    fact_list, payloads = facts_mod.extract(records)
    last = records[-1].line if records else 0
    return Document(
        source=source,
        size=size,
        line_count=line_count if line_count is not None else last,
        full_parse=full_parse,
        encoding=encoding,
        records=records,
        streams=streams,
        tracebacks=tracebacks,
        errors=errors,
        facts=fact_list,
        payloads=payloads,
    )


_TB_SHAPED = compile_re(
    # frames and carets at the start too: a traceback pasted without its indentation
    r'File "|[~^]*\^[~^]*\s*$|'
    r"\s|Traceback \(most recent call last\):|The above exception|During handling|"
    r"(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)\b|\[Previous line|$|"
    # any other exception line: a class name, dotted or not (OutOfResources, Unsupported,
    # StopIteration, BackendCompilerFailed), then its message
    r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)"
)


_DEDENTED_FRAME = compile_re(r'File "[^"]*", line \d+')
_PY_WARNING = compile_re(r"\S+\.py:\d+: \w*Warning: ")
"""A line of Python's warnings module (``path.py:N: UserWarning: message``): a warning, whatever
its message says (cuDNN's "Plan failed with an OutOfMemoryError" while it tries plans), never a
failure line."""


@cache
def _startup_noise() -> re.Pattern[str]:
    """What TensorFlow and XLA log at error level on every start where another library (JAX,
    torch_xla, TensorFlow itself imported twice) registered the same CUDA plugin first: no
    failure (compiled when a log first has an error-level line)."""
    return compile_re(
        r"Unable to register cu(?:DNN|FFT|BLAS) factory: Attempting to register factory for "
        r"plugin \w+ when one has already been registered|computation placer already registered"
    )


def warning_record(rec: Record) -> bool:
    """A record a program printed as no more than a warning: logged at warning level or below
    (an INFO stats line), a line of Python's warnings module, or a line without a level that
    begins "Warning: ". Another line without a level is none of these: nothing says how the
    program took it."""
    return (
        rec.level in ("WARNING", "WARN", "INFO", "DEBUG", "TRACE")
        or _PY_WARNING.match(rec.text.lstrip()) is not None
        or says_warning(rec.text, rec.level)
    )


def says_warning(text: str, level: str | None) -> bool:
    """A line without a level whose message says it is a warning ("Warning: Ran out of memory
    when regular VAE decoding, retrying with tiled VAE decoding.", as ComfyUI logs it): still a
    failure line for what it says, but the program took it as a warning."""
    return not level and text.lstrip().startswith("Warning: ")


_MESSAGE_LINES = 12


def _streams(records: list[Record]) -> list[str]:
    """Each record's stream. A logger that prefixes only the first line of a message (SGLang's
    "[… TP0] Scheduler hit an exception: Traceback (most recent call last):") leaves the
    traceback's other lines bare: they belong to the stream whose line opened the traceback,
    for as long as they are shaped like a traceback, and so do the lines of its exception's
    message below it.

    A line is bare when nothing but what every line of the log carries is on it: no stream,
    or only the outer part of the carried one (a collector's or launcher's prefix around
    SGLang's "[… TP1]": ``srun -l``'s "0: ", kubectl's "[pod/…]", compose's "app-1  | ",
    Ray's "(WorkerDict pid=N, ip=…)"), and no time unless the exception line had one too (the
    container runtime stamps every line, ``docker logs --timestamps``)."""
    out: list[str] = []
    carry = ""
    prev = ""  # the previous record's text, when it was carried
    message = 0  # lines of a carried exception's message still to carry ("Last error:" ...)
    stamped = False  # the carried exception line had a time: a time is no header of its own
    for rec in records:
        stream = rec.stream
        bare = rec.level is None and (
            not stream or (carry != "" and carry.startswith(stream + " / "))
        )
        if bare and carry and (_TB_SHAPED.match(rec.text) or _DEDENTED_FRAME.match(prev)):
            # (the line under a frame is its source line, whatever its shape)
            rec.stream = carry
            out.append(carry)
            if EXCEPTION_LINE.match(rec.text):
                message = _MESSAGE_LINES
                stamped = rec.time is not None
        elif (
            bare
            and carry
            and message
            and (rec.time is None or stamped)
            and not NEW_OUTPUT.match(rec.text)
        ):
            # the exception's message goes on below it in any shape (NCCL's "Last error:",
            # Triton's source excerpt), up to a line with a header of its own (SGLang's next
            # "[time] ..." line)
            rec.stream = carry
            out.append(carry)
            message -= 1
        elif stream:
            carry = stream if rec.text.endswith("Traceback (most recent call last):") else ""
            message = 0
            out.append(stream)
        else:
            carry = ""
            message = 0
            out.append(stream)
        prev = rec.text if carry else ""
    return out


def _merged(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Spans sorted and merged where they overlap: (starts, ends), for :func:`_inside`."""
    starts: list[int] = []
    ends: list[int] = []
    for a, b in sorted(spans):
        if ends and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    return starts, ends


def _inside(spans: tuple[list[int], list[int]], line: int) -> bool:
    """Whether ``line`` is in one of the merged spans (a binary search: a log of n
    tracebacks costs n log n, not n squared).

    >>> _inside(_merged([(5, 9), (1, 3), (8, 12)]), 10), _inside(_merged([(1, 3)]), 4)
    (True, False)
    """
    starts, ends = spans
    k = bisect_right(starts, line) - 1
    return k >= 0 and line <= ends[k]


_MAX_MORE = 3  # unindented continuation lines
_MAX_MORE_INDENTED = 12  # in all, when the others are indented (a message laid out as a block)


def _continuation(records: list[Record], k: int) -> list[str]:
    """Lines right after an exception line printed alone that carry on its message: same
    stream, no log header of their own, not blank, not another exception line; at most three
    unindented ones, more when they are indented (Ray's "Version mismatch:" block, where an
    unindented line ending in ":" opens the next block)."""
    out: list[str] = []
    first = records[k]
    flat = 0
    block = False  # an indented block has begun: only a line that opens another one continues
    for rec in records[k + 1 : k + 1 + _MAX_MORE_INDENTED]:
        text = rec.text.strip()
        if (
            rec.stream != first.stream
            or rec.level
            or rec.time
            or not text
            or EXCEPTION_LINE.match(text)
        ):
            break
        if rec.text[:1].isspace():
            block = True
        else:
            flat += 1
            if flat > _MAX_MORE or (block and not text.endswith(":")):
                break
        out.append(text)
    return out


def _error_lines(
    records: list[Record], covered: dict[str, list[tuple[int, int]]]
) -> Iterator[ErrorLine]:
    merged = {sid: _merged(spans) for sid, spans in covered.items()}
    for k, rec in enumerate(records):
        text = rec.text
        if not text.strip():
            continue
        spans = merged.get(rec.stream)
        if spans and _inside(spans, rec.line):
            continue
        if (text[0] in "$(P" or "@" in text[:64]) and PROMPT.match(text):
            continue  # a command the user typed, whatever its words
        if k and text[0].isdigit() and (status := exit_status(records[k - 1].text, text)):
            # the exit status of the command before, printed for the user's "echo $?"
            yield ErrorLine(
                line=rec.line, text=f"exit status {text.strip()}", stream=rec.stream, kind=status
            )
            continue
        if rec.level in _QUIET_LEVELS:
            # a few failures are logged at INFO (an access log's 500 answer, Triton's stub)
            if (
                not any(h in text for h in _QUIET_HINTS)
                or (shape := failure_kind(text)) is None
                or not shape.quiet_hint
                or shape.quiet_hint not in text
            ):
                continue
            kind = shape.kind
        elif EXCEPTION_LINE.match(text.strip()):
            kind = "exception"
        elif (shape := failure_kind(text)) is not None:
            kind = shape.kind
        elif rec.level in ERROR_LEVELS:
            kind = "level"
        else:
            continue
        if _PY_WARNING.match(text.lstrip()) or (kind == "level" and _startup_noise().match(text)):
            continue  # a warning, whatever its words; a library's error-level start-up noise
        if kind == "exception":
            more = _continuation(records, k)
        elif text.rstrip().endswith(":"):  # the message on the next line (a Rust panic)
            more = _continuation(records, k)[:1]
        else:
            more = []
        yield ErrorLine(
            line=rec.line,
            text=text.strip(),
            stream=rec.stream,
            level=rec.level,
            kind=kind,
            more=more,
        )


def _segments(tracebacks: list[Traceback]) -> Iterator[tuple[Segment, Traceback]]:
    """Every segment of every traceback, each followed by the tracebacks nested in its
    exception (RemoteTraceback, Ray, exception-group members), in print order."""
    for tb in tracebacks:
        for seg in tb.segments:
            yield seg, tb
            if seg.exception is not None:
                yield from _segments(seg.exception.nested)


def iter_exceptions(doc: Document) -> Iterator[tuple[ExceptionInfo, Traceback | None]]:
    """Every exception in the document: traceback chains, nested ones, and error lines that
    read ``SomeError: message``."""
    for seg, tb in _segments(doc.tracebacks):
        if seg.exception is not None:
            yield seg.exception, tb
    for err in doc.errors:
        if err.kind == "exception":
            m = EXCEPTION_LINE.match(err.text)
            if m:
                message = "\n".join([m.group("msg"), *err.more])
                yield ExceptionInfo(type=m.group("type"), message=message, line=err.line), None


def iter_frames(doc: Document) -> Iterator[Frame]:
    """Every frame of every traceback, nested ones included."""
    for seg, _tb in _segments(doc.tracebacks):
        yield from seg.frames


def quoted_exception(exc: ExceptionInfo) -> tuple[int, str, str] | None:
    """(line offset, type, message) of the last exception line of a traceback quoted in
    ``exc``'s message (torch.multiprocessing's "-- Process 0 terminated with the following
    error:" and the like), when the parse did not take it apart."""
    if exc.nested or "Traceback (most recent call last)" not in exc.message:
        return None
    lines = exc.message.splitlines()
    for k in range(len(lines) - 1, 0, -1):
        m = EXCEPTION_LINE.match(lines[k].strip())
        if m:
            return k, m.group("type"), m.group("msg")
    return None
