"""Whether someone asked the process to stop: tracebacks after a Ctrl-C, a SIGTERM or a
shutdown request are teardown noise, not the failure."""

from __future__ import annotations

import re

from tracelens.models import Document, Record
from tracelens.regex import compile_regex

_STOP_REQUESTED = re.compile(
    r"shutdown triggered|Shutting down|[Rr]eceived (?:signal )?SIG(?:INT|TERM)|signal=SIG(?:INT|TERM)|"
    r"Received sigterm|Aborted!$|^\^C"
)


_STOP_REQUESTED_IN_TEXT = compile_regex(_STOP_REQUESTED.pattern, multiline=True)
"""The same in RE2, over the records' texts joined by newlines: one linear-time search a log
instead of one search a line (nothing in it matches a newline, and ``^``/``$`` then match at
each record's ends)."""


def _first_line(records: list[Record]) -> list[int]:
    """The line of the first record that asks to stop, as a list of none or one."""
    text = "\n".join(rec.text for rec in records)
    if text.count("\n") != max(len(records) - 1, 0):  # a record holding a newline: one by one
        return [rec.line for rec in records if _STOP_REQUESTED.search(rec.text)][:1]
    m = _STOP_REQUESTED_IN_TEXT.search(text)
    return [] if m is None else [records[text.count("\n", 0, m.start())].line]


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
