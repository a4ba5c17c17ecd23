"""A diagnosed log as an incident: fingerprints, a redacted evidence excerpt, the redacted
report, saved into the store."""

from __future__ import annotations

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
    for rec in doc.records:
        if rec.line not in lines:
            continue
        if last is not None and rec.line > last + 1:
            out.append("...")
        out.append(f"{rec.line}: {rec.text}")
        last = rec.line
        if len(out) >= limit:
            out.append("... (excerpt cut)")
            break
    return redactor("\n".join(out))


def incident_fields(report: Report, redactor: Redactor) -> dict | None:
    """The store fields for a report; ``None`` when the log shows no failure."""
    top = report.diagnoses[0] if report.diagnoses else None
    sig = signature(report.document, top)
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
    return {
        "fingerprint": sig.coarse,
        "signature": sig.coarse_text,
        "fingerprint_fine": sig.fine,
        "signature_fine": sig.fine_text,
        "title": redactor(title[:300]),
        "category": category,
        "rule_id": rule_id,
        "severity": severity,
        "exception_type": sig.exception_type,
        "message": redactor(sig.message[:2000]),
        "host": host,
    }


def save(store: Store, report: Report, redactor: Redactor, source: str, seen_at: str | None = None) -> Recorded | None:
    fields = incident_fields(report, redactor)
    if fields is None:
        return None
    data = redact_value(report_dict(report), redactor)
    data.pop("document", None)
    return store.record(
        **fields,
        source=source,
        excerpt=excerpt(report, redactor),
        report=data,
        seen_at=seen_at,
    )
