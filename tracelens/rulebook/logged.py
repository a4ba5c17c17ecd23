"""What a program logged at error level about a failure that has no failure line of its own:
the record just above a line that reports a failure (an access log's 500, a job's "failed"),
and a log's last words (the error a program logged before it exited)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from tracelens.models import Document, ErrorLine, Record
from tracelens.parse.document import ERROR_LEVELS
from tracelens.parse.marks import PROMPT
from tracelens.pyregex import compile_re
from tracelens.rulebook.progress import carried_on

AT_SHUTDOWN = compile_re(
    r"\bat interpreter shutdown\b|\bduring interpreter shutdown\b|Python runtime state: finalizing"
)
"""What CPython prints about a failure while the interpreter shuts down: not the run's failure."""

_CAUSE_WINDOW = 50
"""How many records above a reported failure (an access log's 500, a job's "failed") an
error-level record may be to be taken as what that report is about; the rows of a table the
program printed between them (tritonserver's model and option tables) are not counted."""
_TABLE_ROW = compile_re(r"\s*[|+].*[|+]\s*$")


def logged_cause(doc: Document, report_line: int) -> ErrorLine | None:
    """The first error-level record in the records just above ``report_line``, or None."""
    since, seen = report_line, 0
    records = doc.records  # in line order: walked back from the report, not from the log's end
    for k in range(bisect_left(records, report_line, key=lambda r: r.line) - 1, -1, -1):
        if not _TABLE_ROW.match(records[k].text):
            since, seen = records[k].line, seen + 1
            if seen == _CAUSE_WINDOW:
                break
    for e in doc.errors:
        if e.line >= report_line:
            break
        if e.kind == "level" and e.line >= since and (e.level or "") in ERROR_LEVELS:
            return e
    return None


_LAST_WORDS = 5
"""How many of a log's last non-blank records may hold the error a program logged before it
exited (kohya_ss's "ERROR    Could not load torch: ..."): the last of the log, or of a command's
output in a pasted terminal session (the lines before the next prompt)."""


def _among_last(records: list[Record], line: int, until: int | None = None) -> bool:
    """Whether the record of ``line`` is among the last :data:`_LAST_WORDS` non-blank records
    of the log or of the pasted command's output it is part of, or of those before line
    ``until`` (where the program began to shut down)."""
    k = bisect_left(records, line, key=lambda r: r.line)
    after, last = 0, line
    for rec in records[k + 1 :]:
        if rec.line == last:  # a line's other segments
            continue
        if PROMPT.match(rec.text) or (until is not None and rec.line >= until):
            return True
        if rec.text.strip():
            after, last = after + 1, rec.line
            if after == _LAST_WORDS:
                return False
    return True


def last_words(doc: Document, stop: int | None, reports: Callable[[str], bool]) -> ErrorLine | None:
    """An error-level record among the log's last :data:`_LAST_WORDS` non-blank records (or a
    pasted command's, before the next prompt): the program logged why it stopped and exited.
    Not one after a stop request (line ``stop``), one at interpreter shutdown
    (:data:`AT_SHUTDOWN`), one that only reports a failure (``reports``: a worker that died, an
    engine that failed to start: what symptom rules stand for; a worker stopped with SIGTERM at
    the end of a run) or one the program made any progress after (a request answered, a step
    logged, an install that went through). With a stop, the last records before it count: a
    program that logs an error and then shuts itself down ("Shard 1 failed to start", "Shutting
    down shards") said why."""
    for e in doc.errors:
        if (
            e.kind == "level"
            and (e.level or "") in ERROR_LEVELS
            and not (stop and e.line >= stop)
            and _among_last(doc.records, e.line, stop)
            and not AT_SHUTDOWN.search(e.text)
            and not reports(e.text)
            and not carried_on(doc.records, e.line, least=1)
        ):
            return e
    return None
