"""What a diagnosis screen shows, built the same way for a live log and a stored incident."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracelens.models import Report, Traceback
from tracelens.read.logread import clean


@dataclass
class DiagnosisView:
    """Everything the diagnosis screen needs, independent of where it came from."""

    source: str
    report: dict
    """The report in its JSON form (``diagnoses``, ``facts``)."""
    lines: list[tuple[int, str]] = field(default_factory=list)
    """Log lines to show (the whole log, or the stored excerpt), with their numbers."""
    tracebacks: list[Traceback] = field(default_factory=list)
    incident: dict | None = None
    similar: list[dict] = field(default_factory=list)
    live: Report | None = None
    """The live report, when the log was diagnosed now (it can then be saved)."""

    @property
    def diagnoses(self) -> list[dict]:
        return self.report.get("diagnoses") or []

    @property
    def evidence_lines(self) -> list[int]:
        out: set[int] = set()
        for d in self.diagnoses:
            out.update(e["line"] for e in d.get("evidence") or [])
        return sorted(out)

    @property
    def title(self) -> str:
        if self.diagnoses:
            return self.diagnoses[0]["title"]
        if self.incident:
            return self.incident.get("title") or "incident"
        return "No known failure"


def from_report(rep: Report) -> DiagnosisView:
    from tracelens.render.jsonout import report_dict

    data = report_dict(rep)
    data.pop("document", None)
    return DiagnosisView(
        source=rep.source,
        report=data,
        lines=[(r.line, clean(r.text)) for r in rep.document.records],
        tracebacks=list(rep.document.tracebacks),
        similar=list(rep.similar),
        live=rep,
    )


def from_incident(store, incident_id: int) -> DiagnosisView:
    inc = store.incident(incident_id)
    excerpt, rep = store.latest_occurrence(incident_id)
    lines: list[tuple[int, str]] = []
    for raw in excerpt.splitlines():
        num, sep, text = raw.partition(": ")
        if sep and num.isdigit():
            lines.append((int(num), clean(text)))
    return DiagnosisView(
        source=inc["occurrences"][-1]["source"] if inc["occurrences"] else "",
        report=rep,
        lines=lines,
        incident=inc,
    )
