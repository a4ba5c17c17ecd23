"""Every corpus log parses to the shape in its ``.expect.yaml``, reads its expected facts, and
diagnoses to its expected rule (or to nothing, for healthy logs)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from corpus_expect import CORPUS, corpus_logs, expect_path, expected, summarize
from tiers import sample

from tracelens.engine import parse_path, report
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.origin import Wrappers, find_origin

ALL = corpus_logs()
LOGS = sample(ALL)


@cache
def _parsed(log: Path):
    """Each log is parsed once per test process for the parse and fact checks (they only read
    the document), and once more for the diagnosis (which marks the run that failed in it)."""
    return parse_path(str(log))


@cache
def _reported(log: Path):
    return report(parse_path(str(log)))


def test_corpus_is_large_enough():
    assert len(ALL) >= 25
    assert all(expect_path(p).exists() for p in ALL), [
        str(p) for p in ALL if not expect_path(p).exists()
    ]


def _expect(log: Path) -> dict:
    return expected(log)


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(CORPUS)) for p in LOGS])
def test_parse(log):
    assert summarize(_parsed(log)) == _expect(log)["parse"]


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(CORPUS)) for p in LOGS])
def test_facts_and_top_rule(log):
    exp = _expect(log)
    doc = _parsed(log)
    facts = {name: f.value for name, f in doc.fact_map().items()}
    for name, value in (exp.get("facts") or {}).items():
        assert facts.get(name) == str(value), name
    if "top_rule" in exp:
        got = [d.rule_id for d in _reported(log).diagnoses]
        assert (got[0] if got else None) == exp["top_rule"], got


ALL_UNRECOGNIZED = [p for p in ALL if p.parent.name == "unrecognized"]
UNRECOGNIZED = sample(ALL_UNRECOGNIZED)
FAILING = [p for p in LOGS if _expect(p).get("top_rule") and p.parent.name != "healthy"]


def test_unrecognized_corpus_is_large_enough():
    """Enough real failures no rule knows to test the never-silent path on. A log leaves this
    folder for corpus/incidents when a rule learns its failure; held-out rounds bring new
    ones (a rule's own examples with the rule left out are tested by the calibration)."""
    assert len(ALL_UNRECOGNIZED) >= 25


@pytest.mark.parametrize("log", UNRECOGNIZED, ids=[p.name for p in UNRECOGNIZED])
def test_unrecognized_failures_are_named_with_their_line(log):
    exp = _expect(log)["unrecognized"]
    first = _reported(log).diagnoses[0]
    assert first.rule_id == "unrecognized" and first.severity == "error"
    quoted = [e for e in first.evidence if e.line == exp["line"]]
    assert quoted and exp["text"] in quoted[0].text, [(e.line, e.text) for e in first.evidence]
    assert f"line {exp['line']}" in first.root_cause


@pytest.mark.parametrize("log", FAILING, ids=[str(p.relative_to(CORPUS)) for p in FAILING])
def test_a_failing_log_leads_with_a_cause_not_a_symptom(log):
    rep = _reported(log)
    doc = rep.document
    first = rep.diagnoses[0]
    assert first.severity in ("error", "fatal"), first.rule_id
    origin, _ = find_origin(doc, Wrappers(default_rules().wrappers))
    if origin is not None:  # else only a symptom or a rule's own lines say what failed
        assert not first.secondary, first.rule_id
        # the originating line is in the first diagnosis's evidence, or in that of another
        # cause ranked below a broader one (a build failure above the compiler's own error)
        causes = [d for d in rep.diagnoses if not d.secondary]
        assert any(origin.covers(e.line) for d in causes for e in d.evidence), (
            origin.line,
            first.rule_id,
        )


ALL_HEALTHY = sorted((CORPUS / "healthy").glob("*.log"))
HEALTHY = sample(ALL_HEALTHY)


def test_healthy_corpus_is_large_enough():
    assert len(ALL_HEALTHY) >= 8


@pytest.mark.parametrize("log", HEALTHY, ids=[p.name for p in HEALTHY])
def test_healthy_logs_get_no_error_level_diagnosis(log):
    got = [(d.rule_id, d.severity) for d in _reported(log).diagnoses]
    assert not [g for g in got if g[1] in ("error", "fatal")], got
