"""JSON output: the contract in the design (``{"diagnoses": [...], ...}``)."""

from __future__ import annotations

import json
from typing import TextIO

from tracelens import __version__
from tracelens.models import Document, Report, to_dict


def report_dict(report: Report, document: bool = True) -> dict:
    """The JSON form; ``document=False`` leaves the document out (the store keeps it apart)."""
    data = {
        "tracelens_version": __version__,
        "source": report.source,
        "verdict": report.verdict,
        "unrecognized": report.unrecognized,
        "diagnoses": [to_dict(d) for d in report.diagnoses],
        "facts": report.facts,
        "similar": [to_dict(h) for h in report.similar],
    }
    if document:
        data["document"] = document_dict(report.document)
    return data


def document_dict(doc: Document) -> dict:
    data = to_dict(doc, exclude={"facts"})
    data["facts"] = [to_dict(f, exclude={"priority"}) for f in doc.facts]
    return data


def write_json(report: Report, stream: TextIO) -> None:
    """The JSON report written to ``stream`` piece by piece, then a newline."""
    json.dump(report_dict(report), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
    stream.flush()


def write_json_list(reports: list[Report], stream: TextIO) -> None:
    """Several JSON reports as one JSON list, each written as it is encoded."""
    stream.write("[")
    for k, report in enumerate(reports):
        stream.write(",\n" if k else "\n")
        json.dump(report_dict(report), stream, indent=2, ensure_ascii=False)
    stream.write("\n]\n" if reports else "]\n")
    stream.flush()


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False)
