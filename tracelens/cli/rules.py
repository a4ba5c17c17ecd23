"""``rules``: list, show, lint, test and document the knowledge base."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracelens.cli.app import DIRECTORY, Failure, HelpGroup, _load_rules, echo, rules_option


@click.group(cls=HelpGroup)
def rules() -> None:
    """List, show, lint and test rules.

    Example:

        tracelens rules test
    """


@rules.command("list")
@rules_option
@click.option("--category", default=None, help="Only rules of this category.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def rules_list(rules_dirs: tuple[str, ...], category: str | None, fmt: str) -> None:
    """List rules: id, category, severity, title.

    Example:

        tracelens rules list --category gpu-oom
    """
    import json

    rs = _load_rules(rules_dirs)
    items = [lr.rule for lr in rs.rules if category is None or lr.rule.category == category]
    items.sort(key=lambda r: r.id)
    if fmt == "json":
        echo(json.dumps([{"id": r.id, "category": r.category, "severity": r.severity, "title": r.title} for r in items], indent=2))
        return
    width = max((len(r.id) for r in items), default=10)
    for r in items:
        echo(f"{r.id.ljust(width)}  {r.category:<30} {r.severity:<8} {r.title}")


@rules.command("show")
@click.argument("rule_id")
@rules_option
def rules_show(rule_id: str, rules_dirs: tuple[str, ...]) -> None:
    """Print a rule's YAML file.

    Example:

        tracelens rules show torch/cuda-oom
    """
    rs = _load_rules(rules_dirs)
    lr = rs.get(rule_id)
    if lr is None:
        raise Failure(f"no rule {rule_id!r} (see 'tracelens rules list')")
    echo(f"# {lr.path}")
    echo(lr.path.read_text(encoding="utf-8").rstrip())


@rules.command("lint")
@click.argument("dirs", nargs=-1, type=DIRECTORY)
def rules_lint(dirs: tuple[str, ...]) -> None:
    """Check rule files and report every problem at once (exit 1 if any).

    Example:

        tracelens rules lint my-rules/
    """
    from tracelens.authoring.checks import lint
    from tracelens.rulebook.load import load, rule_dirs

    roots = [Path(d) for d in dirs] if dirs else rule_dirs()
    rs = load(roots, strict=False)
    problems = [str(e) for e in rs.errors] + lint(rs)
    for p in problems:
        echo(p)
    echo(f"{len(rs.rules)} rules, {len(problems)} problem(s)")
    if problems:
        sys.exit(1)


@rules.command("test")
@click.argument("dirs", nargs=-1, type=DIRECTORY)
@click.option("--rule", "only", default=None, help="Test one rule id only.")
@click.option("--healthy", "healthy_dirs", multiple=True, type=DIRECTORY, help="Extra folder of healthy logs.")
def rules_test(dirs: tuple[str, ...], only: str | None, healthy_dirs: tuple[str, ...]) -> None:
    """Every example diagnoses to its rule at rank 1; no rule fires on a healthy log.

    Example:

        tracelens rules test --rule vllm/attention/mla-fp8-kv-unsupported
    """
    from tracelens.authoring.checks import run_tests
    from tracelens.rulebook.load import load, rule_dirs, shipped_healthy_dir

    roots = [Path(d) for d in dirs] if dirs else rule_dirs()
    rs = load(roots, strict=False)
    for e in rs.errors:
        echo(f"ERROR {e}")
    healthy = [shipped_healthy_dir(), *(Path(h) for h in healthy_dirs)]
    results = run_tests(rs, healthy, only=only)
    failed = [r for r in results if not r.ok]
    for r in failed:
        echo(f"FAIL {r.name}: {r.detail}")
    passed = len(results) - len(failed)
    echo(f"{passed} passed, {len(failed) + len(rs.errors)} failed")
    if failed or rs.errors:
        sys.exit(1)


@rules.command("schema")
def rules_schema() -> None:
    """Print the JSON schema of a rule file (for editors).

    Example:

        tracelens rules schema > rules/rule.schema.json
    """
    from tracelens.authoring.catalogue import schema_json

    echo(schema_json(), nl=False)


@rules.command("catalogue")
@rules_option
def rules_catalogue(rules_dirs: tuple[str, ...]) -> None:
    """Print the rule catalogue as Markdown.

    Example:

        tracelens rules catalogue > docs/rules.md
    """
    from tracelens.authoring.catalogue import catalogue_md

    echo(catalogue_md(_load_rules(rules_dirs)), nl=False)
