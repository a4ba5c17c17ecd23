"""Whether someone asked the process to stop: tracebacks after a Ctrl-C, a SIGTERM or a
shutdown request are teardown noise, not the failure."""

from __future__ import annotations

import re

from tracelens.models import Document

_STOP_REQUESTED = re.compile(
    r"shutdown triggered|Shutting down|[Rr]eceived (?:signal )?SIG(?:INT|TERM)|signal=SIG(?:INT|TERM)|"
    r"Received sigterm|Aborted!$|^\^C"
)


def stop_requested_line(doc: Document) -> int | None:
    """Line where someone asked the process to stop (Ctrl-C, SIGTERM, a shutdown request, a
    KeyboardInterrupt), or None."""
    lines = [rec.line for rec in doc.records if _STOP_REQUESTED.search(rec.text)][:1]
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
