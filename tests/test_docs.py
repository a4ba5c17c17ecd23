"""Docs that come from the code stay current; every command documents itself with an example."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracelens.cli.doc import commands, reference

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path,cmd", commands(), ids=[" ".join(p) for p, _ in commands()])
def test_every_command_has_a_docstring_with_an_example(path, cmd):
    assert cmd.help and "Example:" in cmd.help, " ".join(path)


def test_cli_reference_is_current():
    assert (ROOT / "docs" / "cli.md").read_text() == reference()


def test_readme_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block[0].startswith(
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/tracelens diagnose corpus/"
    )
    assert (
        block[1]
        == "python3 -m venv .venv && .venv/bin/pip install '.[test,ray]' && .venv/bin/python -m pytest -n auto --full"
    )


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block[1] in ci and block[0].split(" && ")[1] in ci
