"""Every corpus log parses to the shape in its ``.expect.yaml``, reads its expected facts, and
diagnoses to its expected rule (or to nothing, for healthy logs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corpus_expect import CORPUS, corpus_logs, expect_path, summarize
from tracelens.engine import parse_path, report

LOGS = corpus_logs()


def test_corpus_is_large_enough():
    assert len(LOGS) >= 25
    assert all(expect_path(p).exists() for p in LOGS), [
        str(p) for p in LOGS if not expect_path(p).exists()
    ]


def _expect(log: Path) -> dict:
    return yaml.safe_load(expect_path(log).read_text())


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(CORPUS)) for p in LOGS])
def test_parse(log):
    assert summarize(parse_path(str(log))) == _expect(log)["parse"]


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(CORPUS)) for p in LOGS])
def test_facts_and_top_rule(log):
    exp = _expect(log)
    doc = parse_path(str(log))
    facts = {name: f.value for name, f in doc.fact_map().items()}
    for name, value in (exp.get("facts") or {}).items():
        assert facts.get(name) == str(value), name
    if "top_rule" in exp:
        got = [d.rule_id for d in report(doc).diagnoses]
        assert (got[0] if got else None) == exp["top_rule"], got


HEALTHY = sorted((CORPUS / "healthy").glob("*.log"))


def test_healthy_corpus_is_large_enough():
    assert len(HEALTHY) >= 8


@pytest.mark.parametrize("log", HEALTHY, ids=[p.name for p in HEALTHY])
def test_healthy_logs_stay_silent(log):
    assert report(parse_path(str(log))).diagnoses == []
