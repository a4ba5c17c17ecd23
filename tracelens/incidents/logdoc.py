"""The parsed log kept with a stored incident: every line (number, process, level, text),
redacted, so that a stored incident's log and tracebacks read like a live log's.

The stored form is plain JSON: ``records`` as ``[line, stream, level, text]`` rows and what the
document says of the log as a whole (size, line count, encoding, whether it was parsed whole);
the store keeps it compressed in its ``documents`` table
(:data:`tracelens.incidents.store.DOCUMENT_LIMIT`). Its tracebacks, error lines and facts are
parsed again from those lines when it is read (:func:`document_of`): writing them as well, each
string redacted, was a fifth of what storing a diagnosed log cost, and a stored incident is read
far less often than written. Version 1 (before 2026-12) kept the parsed document too; it reads
as it was stored.
"""

from __future__ import annotations

from collections.abc import Iterable

from tracelens.incidents.redact import Redactor
from tracelens.models import Document, Record, Report, Traceback, adapter
from tracelens.parse.fold import fold

VERSION = 2
"""The stored form's version: 2 keeps the lines, 1 the parsed document too (a reader skips a
form it does not know)."""
READS = (1, 2)
"""The versions :func:`load_document` reads."""
LOG_LIMIT = 8 << 20
"""Characters of log text kept; a longer log keeps the lines nearest its failure."""


def redacted_texts(records: Iterable[Record], redactor: Redactor, chunk: int = 256) -> list[str]:
    """Each record's text, redacted; the body of a private key block is dropped line by line
    (its BEGIN and END lines may be far apart, so no single-line pattern sees it whole).

    Lines are redacted ``chunk`` at a time, joined (one pattern scan for many lines instead of
    one per line); a chunk where a replacement took a line break with it is redacted line by
    line instead, so that every text stays on its own line."""
    texts: list[str] = []
    in_key = False
    for rec in records:
        text = rec.text
        if redactor.enabled and "PRIVATE KEY" in text and "-----" in text:
            in_key = "-----BEGIN" in text
            text = "[REDACTED:private-key]"
        elif redactor.enabled and in_key:
            text = "[REDACTED:private-key]"
        texts.append(text)
    out: list[str] = []
    for k in range(0, len(texts), chunk):
        part = texts[k : k + chunk]
        pieces = redactor.joined(part).split("\n")
        out.extend(pieces if len(pieces) == len(part) else map(redactor, part))
    return out


def _kept(records: list[Record], around: int, limit: int) -> list[Record]:
    """The records to keep: all of them when their text fits in ``limit`` characters, else
    the run of lines nearest line ``around`` that does."""
    if sum(len(r.text) for r in records) <= limit:
        return records
    mid = next((k for k, r in enumerate(records) if r.line >= around), len(records) // 2)
    lo = hi = min(mid, len(records) - 1)
    size = len(records[lo].text)
    while True:
        grew = False
        if hi + 1 < len(records) and size + len(records[hi + 1].text) <= limit:
            hi += 1
            size += len(records[hi].text)
            grew = True
        if lo > 0 and size + len(records[lo - 1].text) <= limit:
            lo -= 1
            size += len(records[lo].text)
            grew = True
        if not grew:
            return records[lo : hi + 1]


def stored_document(report: Report, redactor: Redactor, limit: int = LOG_LIMIT) -> dict:
    """The parsed log of ``report`` as the store keeps it, redacted by ``redactor`` (which has
    learned the report's sources, see :func:`tracelens.incidents.incident.report_sources`)."""
    doc = report.document
    around = doc.failure_line or next(
        (e.line for d in report.diagnoses for e in d.evidence), doc.line_count // 2
    )
    kept = _kept(doc.records, around, limit)
    streams = {name: redactor(name) for name in {rec.stream for rec in kept}}
    rows = [
        [rec.line, streams[rec.stream], rec.level or "", text]
        for rec, text in zip(kept, redacted_texts(kept, redactor))
    ]
    return {
        "version": VERSION,
        "records": rows,
        "cut": len(kept) < len(doc.records),
        "line_count": doc.line_count,
        "failure_line": doc.failure_line,
        "size": doc.size,
        "full_parse": doc.full_parse,
        "encoding": doc.encoding,
    }


def load_document(store, incident_id: int) -> dict | None:
    """The stored parsed log of an incident's newest occurrence (the one
    :meth:`~tracelens.incidents.store.Store.latest_occurrence` reads); ``None`` when it was
    stored without one (by an older tracelens, or too large)."""
    import json
    import zlib

    row = store.db.execute(
        "SELECT documents.data FROM occurrences LEFT JOIN documents"
        " ON documents.occurrence_id = occurrences.id WHERE occurrences.incident_id = ?"
        " ORDER BY occurrences.seen_at DESC, occurrences.id DESC LIMIT 1",
        [incident_id],
    ).fetchone()
    if row is None or row[0] is None:
        return None
    data = json.loads(zlib.decompress(row[0]))
    return data if data.get("version") in READS else None


def records_of(data: dict) -> list[Record]:
    """The stored lines as records."""
    return [
        Record(line=line, text=text, stream=stream, level=level or None)
        for line, stream, level, text in data.get("records") or []
    ]


def document_of(data: dict, source: str = "-") -> Document:
    """The stored parsed log as the document a live diagnosis gives (its lines, tracebacks,
    error lines, facts and failure line): parsed again from the stored lines, or, for a form
    that kept the parsed document (version 1), that document."""
    records = records_of(data)
    kept = data.get("document")
    if isinstance(kept, dict):
        doc = adapter(Document).validate_python(kept)
        doc.tracebacks = fold(doc.tracebacks)
    elif data.get("version", 0) >= 2:
        from tracelens.parse.document import build

        doc = build(
            records,
            source=source,
            size=int(data.get("size") or 0),
            line_count=int(data.get("line_count") or 0),
            full_parse=bool(data.get("full_parse", True)),
            encoding=str(data.get("encoding") or "utf-8"),
        )
    else:
        doc = Document(source=source)
    doc.records = records
    doc.failure_line = int(data.get("failure_line") or 0)
    return doc


def tracebacks_of(data: dict) -> list[Traceback]:
    """The stored log's tracebacks, folded (:func:`tracelens.parse.fold.fold`): a document
    stored before the fold knew per-rank copies that differ in a path or id shows them as one
    traceback too."""
    return document_of(data).tracebacks
