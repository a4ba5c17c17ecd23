"""What a diagnosis screen shows, built the same way for a live log and a stored incident."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracelens.incidents.records import Excerpt, ExcerptLine, Incident
from tracelens.models import Diagnosis, Record, Report, SimilarIncident, Traceback
from tracelens.read.logread import clean


@dataclass
class DiagnosisView:
    """Everything the diagnosis screen needs, independent of where it came from."""

    source: str
    report: Report
    """The report: diagnosed now, or loaded back from the store."""
    lines: list[ExcerptLine] = field(default_factory=list)
    """Log lines to show (the whole log, or the stored excerpt), with their numbers."""
    tracebacks: list[Traceback] = field(default_factory=list)
    incident: Incident | None = None
    similar: list[SimilarIncident] = field(default_factory=list)
    """Past incidents like this one, best first."""
    live: Report | None = None
    """The live report, when the log was diagnosed now (it can then be saved)."""
    excerpt: Excerpt | None = None
    """The stored excerpt of an incident (what its ticket quotes)."""

    @property
    def diagnoses(self) -> list[Diagnosis]:
        return self.report.diagnoses

    @property
    def evidence_lines(self) -> list[int]:
        out: set[int] = set()
        for d in self.diagnoses:
            out.update(e.line for e in d.evidence)
        return sorted(out)

    @property
    def title(self) -> str:
        if self.diagnoses:
            return self.diagnoses[0].title
        if self.incident:
            return self.incident.title or "incident"
        return "No known failure"


def _lines(records: list[Record]) -> list[ExcerptLine]:
    return [ExcerptLine(line=r.line, text=clean(r.text), process=r.stream) for r in records]


def from_report(rep: Report) -> DiagnosisView:
    return DiagnosisView(
        source=rep.source,
        report=rep,
        lines=_lines(rep.document.records),
        tracebacks=list(rep.document.tracebacks),
        similar=list(rep.similar),
        live=rep,
    )


def from_incident(store, incident_id: int) -> DiagnosisView:
    inc = store.incident(incident_id)
    stored = store.latest_occurrence(incident_id)
    rep = stored.report or Report(source=inc.title, document=_empty(inc.title))
    if rep.document.records:  # the parsed log was kept with the incident
        lines = _lines(rep.document.records)
    else:
        lines = [
            ExcerptLine(line=ln.line, text=clean(ln.text), process=ln.process, evidence=ln.evidence)
            for ln in stored.excerpt.lines
        ]
    return DiagnosisView(
        source=inc.occurrences[-1].source if inc.occurrences else "",
        report=rep,
        lines=lines,
        tracebacks=list(rep.document.tracebacks),
        incident=inc,
        excerpt=stored.excerpt,
    )


def _empty(source: str):
    from tracelens.models import Document

    return Document(source=source)
