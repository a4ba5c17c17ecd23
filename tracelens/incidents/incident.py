"""A diagnosed log as an incident: fingerprints, a redacted evidence excerpt, the redacted
report, saved into the store."""

from __future__ import annotations

from tracelens.incidents.logdoc import stored_document
from tracelens.incidents.redact import Redactor
from tracelens.incidents.signature import signature
from tracelens.incidents.store import Recorded, Store
from tracelens.models import Report
from tracelens.render.jsonout import report_dict

UNCLASSIFIED = "unclassified"
"""Category of an incident no rule knows."""


def redact_value(value, redactor: Redactor):
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, list):
        return [redact_value(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v, redactor) for k, v in value.items()}
    return value


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


def excerpt(report: Report, redactor: Redactor, context: int = 8, limit: int = 400) -> str:
    """The log lines around the evidence (or the first traceback), redacted, with numbers."""
    doc = report.document
    lines: set[int] = set()
    if report.diagnoses:
        for e in report.diagnoses[0].evidence:
            lines.update(range(e.line - context, e.line + context + 1))
    elif doc.tracebacks:
        tb = doc.tracebacks[0]
        lines.update(range(tb.start_line - context, tb.end_line + context + 1))
    elif doc.errors:
        for err in doc.errors[:5]:
            lines.update(range(err.line - context, err.line + context + 1))
    out, last = [], None
    in_key = (
        False  # inside a private key block: its body is dropped even when BEGIN or END is not shown
    )
    for rec in doc.records:
        text = rec.text
        if not redactor.enabled:
            pass
        elif "PRIVATE KEY" in text and "-----" in text:
            in_key = "-----BEGIN" in text
            if rec.line in lines:
                text = "[REDACTED:private-key]"
        elif in_key:
            text = "[REDACTED:private-key]"
        if rec.line not in lines:
            continue
        if last is not None and rec.line > last + 1:
            out.append("...")
        out.append(f"{rec.line}: {text}")
        last = rec.line
        if len(out) >= limit:
            out.append("... (excerpt cut)")
            break
    return redactor("\n".join(out))


def incident_fields(report: Report, redactor: Redactor) -> dict | None:
    """The store fields for a report; ``None`` when the log shows no failure. ``redactor``
    has learned the report's sources (:func:`report_sources`)."""
    top = report.diagnoses[0] if report.diagnoses else None
    sig = signature(report.document, top, redactor)
    if sig is None:
        return None
    if top is not None:
        title, category, rule_id, severity = top.title, top.category, top.rule_id, top.severity
    else:
        first = sig.message.splitlines()[0] if sig.message else ""
        title = f"{sig.exception_type}: {first}" if sig.exception_type else first
        category, rule_id, severity = UNCLASSIFIED, None, "error"
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
    data = redact_value(report_dict(report), redactor)
    data.pop("document", None)
    return store.record(
        **fields,
        source=redactor(source),
        excerpt=excerpt(report, redactor),
        report=data,
        seen_at=seen_at,
        log_hash=log_hash,
        recount=recount,
        document=stored_document(report, redactor, redact_value),
    )
