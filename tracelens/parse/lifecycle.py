"""Whether someone asked the process to stop: tracebacks after a Ctrl-C, a SIGTERM or a
shutdown request are teardown noise, not the failure."""

from __future__ import annotations

from tracelens.models import Document, Record
from tracelens.pyregex import compile_re
from tracelens.regex import compile_regex

_STOP_REQUESTED = compile_re(
    r"shutdown triggered|Shutting down|[Rr]eceived (?:signal )?SIG(?:INT|TERM)|signal=SIG(?:INT|TERM)|"
    r"Received sigterm|Aborted!$|^\^C|^Shutdown initiated \(timeout=\d+\)"
)
"""... and vLLM's engine core starting its orderly shutdown (0.2x: "[core.py] Shutdown initiated
(timeout=30)", draining in-flight requests and refusing new ones with 503)."""


_STOP_REQUESTED_IN_TEXT = compile_regex(_STOP_REQUESTED.pattern, multiline=True)
"""The same in RE2, over the records' texts joined by newlines: one linear-time search a log
instead of one search a line (nothing in it matches a newline, and ``^``/``$`` then match at
each record's ends)."""


_SELF_SENT = compile_re(r"(?i)\bsend(?:ing)? sigterm to (?:process|pid)\b")
"""A program's line saying it sends SIGTERM to its own child (vLLM's process manager stopping
the engine core after the API server failed: "[shutdown] Process manager: send sigterm to
process EngineCore"): the child's "received signal=SIGTERM" below it is no one asking to stop."""
_SELF_SENT_WITHIN = 12


def _self_sent(records: list[Record], k: int) -> bool:
    """Record ``k`` tells of a SIGTERM its program's own line above it said it sent."""
    return "SIGTERM" in records[k].text.upper() and any(
        _SELF_SENT.search(r.text) for r in records[max(0, k - _SELF_SENT_WITHIN) : k]
    )


def _first_line(records: list[Record]) -> list[int]:
    """The line of the first record that asks to stop, as a list of none or one."""
    text = "\n".join(rec.text for rec in records)
    if text.count("\n") != max(len(records) - 1, 0):  # a record holding a newline: one by one
        return [
            rec.line
            for k, rec in enumerate(records)
            if _STOP_REQUESTED.search(rec.text) and not _self_sent(records, k)
        ][:1]
    pos = 0
    while (m := _STOP_REQUESTED_IN_TEXT.search(text, pos)) is not None:
        k = text.count("\n", 0, m.start())
        if not _self_sent(records, k):
            return [records[k].line]
        pos = text.find("\n", m.end())  # the next record
        if pos < 0:
            break
    return []


def stop_requested_line(doc: Document) -> int | None:
    """Line where someone asked the process to stop (Ctrl-C, SIGTERM, a shutdown request, a
    KeyboardInterrupt), or None."""
    lines = _first_line(doc.records)
    for tb in doc.tracebacks:
        exc = tb.exception
        if exc is not None and exc.type == "KeyboardInterrupt":
            lines.append(min(tb.start_line, exc.line))
            break
    return min(lines) if lines else None


def teardown_only(doc: Document) -> bool:
    """Every traceback in the log came after a requested stop: shutdown noise, not a failure."""
    stop = stop_requested_line(doc)
    return (
        bool(doc.tracebacks)
        and stop is not None
        and all(tb.start_line >= stop for tb in doc.tracebacks)
    )
