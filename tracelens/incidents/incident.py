"""A diagnosed log as an incident: fingerprints, a redacted evidence excerpt, the redacted
report, saved into the store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from tracelens.incidents.logdoc import stored_document
from tracelens.incidents.records import Excerpt, ExcerptLine, Incident, is_banner, load_report
from tracelens.incidents.redact import Redactor
from tracelens.incidents.signature import signature
from tracelens.incidents.store import Recorded, Store
from tracelens.models import Record, Report, adapter, model, to_dict
from tracelens.render.jsonout import report_dict

_M = TypeVar("_M")
UNCLASSIFIED = "unclassified"
"""Category of an incident no rule knows."""


def redact_value(value, redactor: Redactor):
    """JSON-like data (strings, lists, dicts; keys kept) with every string redacted, all of
    them in one :meth:`Redactor.many` pass; ``value`` itself when no string changed (most
    reports: nothing is copied)."""
    strings: list[str] = []
    _strings(value, strings)
    redacted = redactor.many(strings)
    if all(a is b for a, b in zip(strings, redacted)):
        return value
    return _rebuilt(value, iter(redacted))


def _strings(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)


def _rebuilt(value, redacted: Iterator[str]):
    if isinstance(value, str):
        return next(redacted)
    if isinstance(value, list):
        return [_rebuilt(v, redacted) for v in value]
    if isinstance(value, dict):
        return {k: _rebuilt(v, redacted) for k, v in value.items()}
    return value


def redacted_report(report: Report, redactor: Redactor) -> dict:
    """A report's JSON form without its document (the store keeps the parsed log apart), every
    string redacted."""
    return redact_value(report_dict(report, document=False), redactor)


def redacted_model(report: Report, redactor: Redactor) -> Report:
    """A live report redacted for a ticket: the same model, every string of its diagnoses,
    facts and similar incidents redacted (the document, which a ticket does not show, is
    kept for its counts and the originating failure)."""
    data = redacted_report(report, redactor)
    out = load_report(data)
    out.document = report.document
    return out


def redacted(obj: _M, redactor: Redactor) -> _M:
    """A record (an incident, an excerpt) with every string redacted."""
    cls: type = type(obj)
    return adapter(cls).validate_python(redact_value(to_dict(obj), redactor))


@model
class TicketInput:
    """What a ticket is made from, redacted."""

    report: Report
    excerpt: Excerpt
    incident: Incident | None = None


def live_ticket(report: Report, redactor: Redactor) -> TicketInput:
    """A ticket's input from a log diagnosed now."""
    redactor = redactor.learned(report_sources(report))
    return TicketInput(report=redacted_model(report, redactor), excerpt=excerpt(report, redactor))


def stored_ticket(
    report: Report | None, excerpt: Excerpt, incident: Incident, redactor: Redactor
) -> TicketInput:
    """A ticket's input from a stored incident (stored redacted; redacted again with the
    user's own patterns)."""
    redactor = redactor.learned(
        [
            *(ln.text for ln in excerpt.lines),
            incident.title,
            incident.message or "",
            *(o.signature_fine for o in incident.occurrences or []),
        ]
    )
    if report is None:
        report = load_report({"source": incident.title})
    rep = redacted_model(report, redactor)
    return TicketInput(
        report=rep, excerpt=redacted(excerpt, redactor), incident=redacted(incident, redactor)
    )


def report_sources(report: Report, limit: int = 200) -> list[str]:
    """The full log text a report's fields are made from (evidence lines, exceptions, error
    lines, facts): where :meth:`Redactor.learned` finds the secrets to remove from fields that
    quote them cut short, encoded or normalized."""
    doc = report.document
    from tracelens.parse.document import iter_exceptions

    wanted = {e.line for d in report.diagnoses for e in d.evidence}
    out = [rec.text for rec in doc.records if rec.line in wanted]
    for k, (exc, _tb) in enumerate(iter_exceptions(doc)):
        if k >= limit:
            break
        out += [exc.type, exc.message]
    out += [err.text for err in doc.errors[:limit]]
    out += [str(v) for v in report.facts.values()]
    out.append(report.source)
    return out


_CONTEXT_BEFORE = 3
"""Lines of the failing process kept before its failure."""


@model
class FailureBlock:
    """Where the originating failure is in the log: its process and its first and last line."""

    process: str
    start: int
    end: int


def failure_block(report: Report) -> FailureBlock | None:
    """The originating failure as :mod:`tracelens.rulebook.origin` found it (else the first
    evidence line, traceback or error line): the process that printed it and its lines."""
    doc = report.document
    line = doc.failure_line
    if line and doc.failure_start and doc.failure_end:
        process = next((r.stream for r in doc.records if r.line == line), "")
        return FailureBlock(process=process, start=doc.failure_start, end=doc.failure_end)
    if not line and report.diagnoses and report.diagnoses[0].evidence:
        line = report.diagnoses[0].evidence[0].line
    if not line and doc.tracebacks:
        line = doc.tracebacks[0].start_line
    if not line and doc.errors:
        line = doc.errors[0].line
    if not line:
        return None
    process = next((r.stream for r in doc.records if r.line == line), "")
    for tb in doc.tracebacks:
        if tb.start_line <= line <= tb.end_line and process in (tb.stream, *tb.streams):
            return FailureBlock(process=process, start=tb.start_line, end=tb.end_line)
    return FailureBlock(process=process, start=line, end=line)


def _origin_records(report: Report, block: FailureBlock) -> list[Record]:
    """The failing process's lines of the failure, in order, and a few before it: lines of
    other processes and banners left out (a line with no process tag inside the failure is a
    continuation of its message and kept)."""
    before: list[Record] = []
    inside: list[Record] = []
    for rec in report.document.records:
        if rec.line > block.end:
            break
        if is_banner(rec.text):
            continue
        if rec.line < block.start:
            if rec.stream == block.process and rec.text.strip():
                before.append(rec)
        elif rec.stream == block.process or not rec.stream:
            inside.append(rec)
    return before[-_CONTEXT_BEFORE:] + inside


def _key_safe(records: list[Record], enabled: bool) -> Iterator[tuple[Record, str]]:
    """Each record with its text, the lines of a private key block replaced: the body is
    dropped even when its BEGIN or END line is far away (no single-line pattern sees it)."""
    in_key = False
    for rec in records:
        text = rec.text
        if not enabled:
            pass
        elif "PRIVATE KEY" in text and "-----" in text:
            in_key = "-----BEGIN" in text
            text = "[REDACTED:private-key]"
        elif in_key:
            text = "[REDACTED:private-key]"
        yield rec, text


def excerpt(
    report: Report,
    redactor: Redactor,
    context: int = 8,
    limit: int = 400,
    origin_limit: int = 300,
) -> Excerpt:
    """The log lines around the evidence (or the first traceback) and the originating
    failure's own lines (:func:`failure_block`), redacted, with their numbers, processes and
    marks. An originating failure longer than ``origin_limit`` lines keeps its first fifth
    and its end."""
    doc = report.document
    lines: set[int] = set()
    evidence: set[int] = set()
    if report.diagnoses:
        for e in report.diagnoses[0].evidence:
            evidence.add(e.line)
            lines.update(range(e.line - context, e.line + context + 1))
    elif doc.tracebacks:
        tb = doc.tracebacks[0]
        lines.update(range(tb.start_line - context, tb.end_line + context + 1))
    elif doc.errors:
        for err in doc.errors[:5]:
            lines.update(range(err.line - context, err.line + context + 1))
    block = failure_block(report)
    origin = _origin_records(report, block) if block else []
    gap = 0
    if len(origin) > origin_limit:
        head = origin_limit // 5
        gap = origin[head - 1].line
        origin = origin[:head] + origin[head - origin_limit :]
    origin_ids = {id(rec) for rec in origin}
    out = Excerpt(origin_gap=gap)
    for rec, text in _key_safe(doc.records, redactor.enabled):
        keep = id(rec) in origin_ids
        if not keep and rec.line not in lines:
            continue
        if not keep and len(out.lines) >= limit:
            out.cut = True
            continue
        out.lines.append(
            ExcerptLine(
                line=rec.line,
                text=text,
                process=rec.stream or "",
                evidence=rec.line in evidence,
                origin=keep,
            )
        )
    texts = redactor.many([ln.text for ln in out.lines])
    processes = {p: redactor(p) for p in {ln.process for ln in out.lines} if p}
    for ln, text in zip(out.lines, texts):
        ln.text = text
        ln.process = processes.get(ln.process, "")
    return out


def incident_fields(report: Report, redactor: Redactor) -> dict | None:
    """The store fields for a report; ``None`` when the log shows no failure. ``redactor``
    has learned the report's sources (:func:`report_sources`)."""
    top = report.diagnoses[0] if report.diagnoses else None
    if top is None:
        # no diagnosis at all: a failure would have one (the first is ``unrecognized`` when no
        # rule knows it), so the tracebacks this log holds were handled (an OOM caught by a
        # batch-size search, a retried download): nothing to store
        return None
    sig = signature(report.document, top, redactor)
    if sig is None:
        return None
    title, category, rule_id, severity = top.title, top.category, top.rule_id, top.severity
    facts = report.document.fact_map()
    host = facts["host"].value if "host" in facts else None
    # every field is redacted whole, then cut: a cut first would leave half a key that no
    # pattern recognises
    return {
        "fingerprint": sig.coarse,
        "signature": sig.coarse_text,
        "fingerprint_fine": sig.fine,
        "signature_fine": sig.fine_text,
        "title": redactor(title)[:300],
        "category": category,
        "rule_id": rule_id,
        "severity": severity,
        "exception_type": redactor(sig.exception_type)[:300],
        "message": redactor(sig.message)[:2000],
        "host": redactor(host) if host else host,
    }


def save(
    store: Store,
    report: Report,
    redactor: Redactor,
    source: str,
    seen_at: str | None = None,
    *,
    log_hash: str | None = None,
    recount: bool = False,
) -> Recorded | None:
    """Store a diagnosed log; ``None`` when it shows no failure. ``log_hash`` (the log's
    content hash) makes storing the same log again count nothing, unless ``recount``."""
    redactor = redactor.learned(report_sources(report))
    fields = incident_fields(report, redactor)
    if fields is None:
        return None
    # the parsed log first: the redactor notes the lines it finds clean, and the excerpt,
    # tracebacks and evidence quote many of them (the order changes no text)
    document = stored_document(report, redactor)
    return store.record(
        **fields,
        source=redactor(source),
        excerpt=excerpt(report, redactor),
        report=redacted_report(report, redactor),
        seen_at=seen_at,
        log_hash=log_hash,
        recount=recount,
        document=document,
    )
