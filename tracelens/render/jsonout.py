"""JSON output: the contract in the design (``{"diagnoses": [...], ...}``)."""

from __future__ import annotations

import json

from tracelens import __version__
from tracelens.models import Document, Report, to_dict


def report_dict(report: Report) -> dict:
    return {
        "tracelens_version": __version__,
        "source": report.source,
        "verdict": report.verdict,
        "unrecognized": report.unrecognized,
        "diagnoses": [to_dict(d) for d in report.diagnoses],
        "facts": report.facts,
        "similar": report.similar,
        "document": document_dict(report.document),
    }


def document_dict(doc: Document) -> dict:
    data = to_dict(doc, exclude={"facts"})
    data["facts"] = [to_dict(f, exclude={"priority"}) for f in doc.facts]
    return data


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False)
