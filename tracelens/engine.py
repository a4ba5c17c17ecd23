"""The library entry point: a log in, a :class:`~tracelens.models.Report` out.

``diagnose`` is pure: it takes the log's text or bytes and a rule set, touches no store and
writes nothing.
"""

from __future__ import annotations

from tracelens.models import Document, Report
from tracelens.parse import document
from tracelens.read import scan
from tracelens.rulebook.load import RuleSet, default_rules
from tracelens.rulebook.rank import evaluate


def parse(data: str | bytes, source: str = "-") -> Document:
    """Parse a log (text or bytes) into a document, without rules."""
    raw = data.encode("utf-8", errors="surrogateescape") if isinstance(data, str) else data
    records, lines, full, encoding = scan.read_bytes(raw)
    return document.build(
        records, source=source, size=len(raw), line_count=lines, full_parse=full, encoding=encoding
    )


def parse_path(path: str, opened=None, prefetch=None) -> Document:
    """Parse a file (or ``-`` for stdin). Raises :class:`~tracelens.read.scan.InputError`.
    ``opened``/``prefetch`` come from :func:`tracelens.read.scan.open_input` and
    :func:`tracelens.read.scan.start_scan` when the caller started reading early."""
    records, size, lines, full, encoding, name = scan.read_path(path, opened, prefetch)
    return document.build(
        records, source=name, size=size, line_count=lines, full_parse=full, encoding=encoding
    )


def report(doc: Document, rules: RuleSet | None = None) -> Report:
    """Run the rules over a parsed document."""
    rules = rules if rules is not None else default_rules()
    diagnoses = evaluate(doc, rules)
    facts = {name: f.value for name, f in sorted(doc.fact_map().items())}
    return Report(source=doc.source, diagnoses=diagnoses, facts=facts, document=doc)


def diagnose(data: str | bytes, rules: RuleSet | None = None, source: str = "-") -> Report:
    """Diagnose a log given as text or bytes."""
    return report(parse(data, source), rules)
