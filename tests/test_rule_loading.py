"""Rule loading refuses what would silently change or disable a rule: duplicate YAML keys, a
user rule that shadows a shipped one by accident, fact tests that can never match, empty
``needs`` literals. ``rules lint`` reports each with its file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracelens.cli import main
from tracelens.rulebook.facttest import parse_fact_test
from tracelens.rulebook.load import load, shipped_rules_dir
from tracelens.rulebook.model import RuleError

RULE = """id: {id}
title: t
category: gpu-oom
severity: fatal
{extra}match: {{all: [{cond}]}}
root_cause: r
remedies: [{{title: a}}]
references: [https://example.org]
"""


def write_rule(root: Path, rule_id: str, extra: str = "", cond: str = "{line: 'boom'}") -> Path:
    path = root / f"{rule_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RULE.format(id=rule_id, extra=extra, cond=cond))
    return path


@pytest.mark.parametrize(
    "extra,cond,needle",
    [
        ("title: again\n", "{line: 'boom'}", "duplicate key 'title'"),
        ("", "{fact: {vllm_version: '>=not.a.version'}}", "can never match"),
        ("", "{fact: {gpu_count: '<many'}}", "can never match"),
        ("needs: ['']\n", "{line: 'boom'}", "needs"),
        ("needs: [[boom, '']]\n", "{line: 'boom'}", "needs"),
        ("needs: [[]]\n", "{line: 'boom'}", "needs"),
    ],
)
def test_lint_reports_a_rule_that_would_silently_misbehave(tmp_path, capsys, extra, cond, needle):
    write_rule(tmp_path / "mine", "x/bad", extra, cond)
    assert main(["rules", "lint", str(tmp_path / "mine")]) == 1
    out = capsys.readouterr().out
    assert "x/bad.yaml" in out and needle in out


@pytest.mark.parametrize(
    "test,value,expected",
    [
        (">=12.0", "12.1", True),
        ("<0.17", "0.16.0rc2.dev313", True),
        ("!=auto", "fp8", True),
        ("==fp8", "fp8", True),
        (">=0.10,<0.17", "0.11.0", True),
        ("fp8*", "FP8_E4M3", True),
        ("<2", "1", True),
    ],
)
def test_meaningful_fact_tests_still_load(test, value, expected):
    assert parse_fact_test(test)(value) is expected


@pytest.mark.parametrize("replaces,problem", [(False, True), (True, False)])
def test_a_rule_with_a_shipped_id_needs_replaces(tmp_path, capsys, replaces, problem):
    shipped = next(
        p for p in sorted(shipped_rules_dir().rglob("*.yaml")) if p.name != "categories.yaml"
    )
    rule_id = shipped.relative_to(shipped_rules_dir()).with_suffix("").as_posix()
    mine = tmp_path / "mine"
    write_rule(mine, rule_id, "replaces: true\n" if replaces else "")
    # through the index, as a run loads them (the shipped rules come from their own index)
    rs = load([shipped_rules_dir(), mine], strict=False)
    errors = [str(e) for e in rs.errors if "replaces" in str(e)]
    assert bool(errors) is problem
    assert rs.get(rule_id).path == (shipped if problem else mine / f"{rule_id}.yaml")
    if problem:
        with pytest.raises(RuleError, match="also the id of"):
            load([shipped_rules_dir(), mine])


def test_two_user_folders_with_one_id_are_reported_by_lint(tmp_path, capsys):
    write_rule(tmp_path / "a", "x/same")
    write_rule(tmp_path / "b", "x/same")
    assert main(["rules", "lint", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "b/x/same.yaml" in out and "also the id of" in out


def test_the_same_folder_named_twice_is_not_a_duplicate(tmp_path, capsys):
    write_rule(tmp_path / "a", "x/one")
    rs = load([tmp_path / "a", tmp_path / "a" / ".." / "a"], strict=True, cache=False)
    assert [lr.id for lr in rs.rules] == ["x/one"]


def test_lint_reports_an_id_too_long_for_the_rules_browser(tmp_path, capsys):
    long_id = "x/" + "a-very-long-name" * 5  # 82 characters
    path = write_rule(tmp_path / "mine", long_id)
    (path.parent / f"{path.stem}.example.log").write_text("boom\n")
    assert main(["rules", "lint", str(tmp_path / "mine")]) == 1
    out = capsys.readouterr().out
    assert f"{long_id}.yaml: id: {len(long_id)} characters, more than 72" in out
