"""The knowledge base checks itself: examples rank 1, healthy logs silent, metadata present,
generated files current."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiers import sample

from tracelens.authoring.catalogue import catalogue_md, schema_json
from tracelens.authoring.checks import check_example, check_healthy, lint
from tracelens.rulebook.load import categories, load, rule_dirs, shipped_healthy_dir

ROOT = Path(__file__).resolve().parent.parent
RULES = load(rule_dirs())
# Every example log ranks its rule first (one in tiers.SAMPLE in the quick suite); one example of
# the table in TRANSFORM_EVERY is also checked in every envelope here (the whole matrix is
# `tracelens rules test`, which CI runs as its own step)
TRANSFORM_EVERY = 8
EXAMPLES = sample((lr, ex) for lr in RULES.rules for ex in lr.examples)
HEALTHY = sample(sorted(shipped_healthy_dir().glob("*.log")))


def test_no_broken_rule_files():
    assert [str(e) for e in RULES.errors] == []


def test_lint_is_clean():
    assert lint(RULES) == []


def test_every_rule_has_an_example():
    assert [lr.id for lr in RULES.rules if not lr.examples] == []


@pytest.mark.parametrize(
    "k,lr,example",
    [(k, lr, ex) for k, (lr, ex) in enumerate(EXAMPLES)],
    ids=[f"{lr.id} <- {ex.name}" for lr, ex in EXAMPLES],
)
def test_rule_example_ranks_its_rule_first(k, lr, example):
    failed = [r for r in check_example(lr, example, RULES, k % TRANSFORM_EVERY == 0) if not r.ok]
    assert failed == [], "; ".join(f"{r.name}: {r.detail}" for r in failed)


@pytest.mark.parametrize("log", HEALTHY, ids=[p.name for p in HEALTHY])
def test_healthy_log_is_silent(log):
    result = check_healthy(log, RULES)
    assert result.ok, result.detail


def test_knowledge_base_breadth():
    assert len(RULES.rules) >= 40
    used = {lr.rule.category for lr in RULES.rules}
    unused = categories() - {"none", "unrecognized"} - used
    assert not unused, sorted(unused)


def test_schema_file_is_current():
    assert (ROOT / "rules" / "rule.schema.json").read_text() == schema_json()


def test_catalogue_is_current():
    assert (ROOT / "docs" / "rules.md").read_text() == catalogue_md(RULES)


def test_coverage_document_is_current():
    from tracelens.authoring.coverage import coverage_md

    assert (ROOT / "docs" / "coverage.md").read_text() == coverage_md(RULES), (
        "docs/coverage.md is stale: tracelens rules coverage > docs/coverage.md"
    )


def test_every_surveyed_signature_has_a_snippet_and_a_known_category():
    import yaml

    data = yaml.safe_load((ROOT / "docs" / "coverage-survey.yaml").read_text())
    assert len(data["signatures"]) >= 100
    cats = categories()
    for sig in data["signatures"]:
        assert sig["snippet"].strip() and sig["category"] in cats, sig["signature"]


def test_explain_never_shows_raw_placeholders():
    # one test over every rule, each rule that shows one named: a case each would be more than
    # a quarter of the quick suite's tests, each costing xdist more than the check itself
    from tracelens.render.rules import render_rule
    from tracelens.rulebook.placeholders import _PLACEHOLDER

    shown = [lr.id for lr in RULES.rules if _PLACEHOLDER.search(render_rule(lr))]
    assert len(RULES.rules) > 1000 and shown == []


def test_the_rule_model_knows_the_one_list_of_severities():
    import typing

    from tracelens.models import SEVERITIES
    from tracelens.rulebook.model import Rule

    hints = typing.get_type_hints(Rule, include_extras=False)
    assert set(typing.get_args(hints["severity"])) == set(SEVERITIES)
