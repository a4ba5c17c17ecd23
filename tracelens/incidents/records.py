"""What the incident store holds, as records: an incident, its occurrences and ticket links, and
the excerpt of the log kept with each occurrence. A stored report loads back into the same
:class:`~tracelens.models.Report` a live diagnosis gives (:func:`load_report`), so every
renderer, the ticket and the TUI read one model.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

import orjson

# the rows of the read queries, declared in rows.py (imported from here too)
from tracelens.incidents.rows import CANDIDATE_COLUMNS, LISTED, Candidate, IncidentRow  # noqa: F401
from tracelens.models import (
    Document,
    IncidentColumns,
    Report,
    TicketLink,
    adapter,
    model,
    to_dict,
)
from tracelens.pyregex import compile_re

_BANNER = compile_re(r"[█▄▀].*[█▄▀]")


def is_banner(text: str) -> bool:
    """A line drawn with block characters: vLLM's start-up banner, a progress bar (nothing a
    maintainer reads in a ticket)."""
    return _BANNER.search(text) is not None


@model
class ExcerptLine:
    """One log line kept with an occurrence."""

    line: int
    """1-based line number in the original log."""
    text: str
    """The line's text (envelope removed, redacted)."""
    process: str = ""
    """The process that wrote it (``Worker_TP7 pid=48537``, ``rank3``); empty when the log
    does not say."""
    evidence: bool = False
    """The top diagnosis quotes this line as evidence."""
    origin: bool = False
    """Part of the originating failure: its process's lines from just before its traceback to
    its last line (what a ticket shows)."""


@model
class Excerpt:
    """The log lines kept with an occurrence, in log order."""

    lines: list[ExcerptLine] = field(default_factory=list)
    cut: bool = False
    """More lines were wanted than an excerpt keeps."""
    origin_gap: int = 0
    """The originating failure was too long to keep whole: the line after which its middle
    was left out (0: kept whole)."""

    def __bool__(self) -> bool:
        return bool(self.lines)

    def numbered(self) -> str:
        """``N: text`` per line, ``...`` where lines were skipped, ``... (excerpt cut)`` at the
        end of a cut excerpt: the form ``incidents show`` and the TUI print."""
        out: list[str] = []
        last: int | None = None
        for ln in self.lines:
            if last is not None and ln.line > last + 1:
                out.append("...")
            out.append(f"{ln.line}: {ln.text}")
            last = ln.line
        if self.cut:
            out.append("... (excerpt cut)")
        return "\n".join(out)

    def origin_lines(self) -> list[ExcerptLine]:
        """The originating failure's lines (its own process, in order)."""
        return [ln for ln in self.lines if ln.origin]


@model
class Occurrence:
    """One log seen of an incident."""

    id: int
    incident_id: int
    fingerprint_fine: str = ""
    signature_fine: str = ""
    seen_at: str = ""
    source: str = ""
    host: str | None = None
    log_hash: str | None = None


@model
class Incident(IncidentColumns):
    """One failure (a coarse fingerprint) and its history: the table's columns, then what was
    read with them."""

    occurrences: list[Occurrence] | None = None
    """Oldest first; ``None`` where not read."""
    tickets: list[TicketLink] | None = None
    """``None`` where not read."""

    @classmethod
    def from_row(cls, row: dict) -> Incident:
        return cls(**cls.columns(row))


_OCCURRENCE_COLUMNS = frozenset(Occurrence.__dataclass_fields__)


def occurrence_from_row(row: dict) -> Occurrence:
    return Occurrence(**{k: v for k, v in row.items() if k in _OCCURRENCE_COLUMNS})


def incident_dict(inc: Incident) -> dict:
    """An incident as the JSON for scripts: its columns, then ``occurrences`` and ``tickets``
    where they were read."""
    data = to_dict(inc)
    for key in ("occurrences", "tickets"):
        if data[key] is None:
            del data[key]
    return data


@dataclass
class Recorded:
    """What storing one log did: its incident and occurrence, whether the incident is new."""

    incident_id: int
    occurrence_id: int
    new: bool
    duplicate: bool = False
    """The same log (by content hash) was already stored: nothing was counted."""


@model
class StoredOccurrence:
    """What an occurrence keeps of its log: the excerpt and the redacted report."""

    excerpt: Excerpt
    report: Report | None = None
    """``None`` for an incident with no occurrence."""


# --- the stored forms ------------------------------------------------------------------------


def excerpt_dict(excerpt: Excerpt) -> dict[str, Any]:
    """``to_dict(excerpt)``, read field by field: every field of a line is a plain value,
    and a long excerpt has hundreds of lines."""
    names = tuple(f.name for f in fields(ExcerptLine))
    get = attrgetter(*names)
    data = {f.name: getattr(excerpt, f.name) for f in fields(Excerpt)}
    data["lines"] = [dict(zip(names, get(ln))) for ln in excerpt.lines]
    return data


LEVEL = 3
"""zlib's level for the stored blobs: an occurrence's three (about 25 KB of JSON) take 0.30 ms
at level 3 against 0.45 ms at zlib's default 6, for 6 % more bytes (level 1: 0.28 ms, 10 %
more; benchmarks/README.md, Ingest). Any level reads back the same."""


def _json(data: Any) -> bytes:
    """``data`` as JSON in UTF-8, by orjson (about five times faster than the standard
    library's encoder on a stored document); a string orjson refuses (a lone surrogate) or an
    integer past 64 bits falls back to ``json.dumps``. Any of them reads back the same."""
    try:
        return orjson.dumps(data)
    except TypeError:
        text = json.dumps(data, ensure_ascii=False, check_circular=False)
        return text.encode("utf-8", "surrogatepass")


def encode_excerpt(excerpt: Excerpt) -> bytes:
    return zlib.compress(_json(excerpt_dict(excerpt)), LEVEL)


def decode_excerpt(blob: bytes | None) -> Excerpt:
    if not blob:
        return Excerpt()
    text = zlib.decompress(blob).decode("utf-8", "replace")
    if not text.startswith("{"):  # written before excerpts were structured
        return parse_numbered(text)
    data = json.loads(text)
    return Excerpt(
        lines=[ExcerptLine(**ln) for ln in data["lines"]],
        cut=bool(data.get("cut")),
        origin_gap=int(data.get("origin_gap") or 0),
    )


_NUMBERED = compile_re(r"(\d+): ?(.*)", re.DOTALL)


def parse_numbered(text: str, evidence: frozenset[int] | set[int] = frozenset()) -> Excerpt:
    """An excerpt of the old stored form (``N: text`` lines, ``...`` between gaps, ``...
    (excerpt cut)`` at the end) as records; ``evidence``: the lines the report quotes."""
    out = Excerpt()
    for raw in text.splitlines():
        m = _NUMBERED.fullmatch(raw)
        if m:
            n = int(m.group(1))
            out.lines.append(ExcerptLine(line=n, text=m.group(2), evidence=n in evidence))
        elif raw == "... (excerpt cut)":
            out.cut = True
    return out


def encode_report(report: Report | dict) -> bytes:
    data = report if isinstance(report, dict) else report_data(report)
    return zlib.compress(_json(data), LEVEL)


def encode_document(document: dict) -> bytes:
    """A parsed log as the store keeps it (:mod:`tracelens.incidents.logdoc`)."""
    return zlib.compress(_json(document), LEVEL)


def encoded(fields: dict[str, Any]) -> dict[str, Any]:
    """The arguments of :meth:`~tracelens.incidents.store.Store.record` with the excerpt, the
    report and the parsed log encoded as the store keeps them: a worker process encodes them
    (in parallel, and bytes travel back cheaply) and the one process that writes the store
    only inserts them."""
    out = dict(fields)
    out["excerpt"] = encode_excerpt(fields["excerpt"])
    out["report"] = encode_report(fields["report"])
    if fields.get("document") is not None:
        out["document"] = encode_document(fields["document"])
    return out


def report_data(report: Report) -> dict:
    """A report as it is stored: its JSON form (the document without its records)."""
    from tracelens.render.jsonout import report_dict

    return report_dict(report)


def load_report(data: dict, stored: dict | None = None) -> Report:
    """A report from its JSON form (live, stored, or redacted) as the model a live diagnosis
    gives. ``stored``: the parsed log kept with an occurrence
    (:func:`tracelens.incidents.logdoc.stored_document`), which gives the report its document
    and lines; without it (an occurrence stored by an older tracelens, or a log too large to
    keep) the document is an empty one that names the source."""
    data = dict(data)
    data.setdefault("source", "-")
    if stored or not isinstance(data.get("document"), dict):
        data["document"] = to_dict(Document(source=str(data["source"])))
    report = adapter(Report).validate_python(data)
    if stored:
        from tracelens.incidents.logdoc import document_of

        report.document = document_of(stored, report.source)
    return report


def decode_report(blob: bytes | None, stored: dict | None = None) -> Report | None:
    if not blob:
        return None
    return load_report(json.loads(zlib.decompress(blob)), stored)


def evidence_lines(report: dict | Report | None) -> set[int]:
    """The lines the top diagnosis quotes."""
    if report is None:
        return set()
    if isinstance(report, Report):
        return {e.line for e in report.diagnoses[0].evidence} if report.diagnoses else set()
    diags: list[Any] = report.get("diagnoses") or []
    return {int(e["line"]) for e in (diags[0].get("evidence") or [])} if diags else set()
