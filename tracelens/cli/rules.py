"""``rules``: list, show, lint, test and document the knowledge base."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracelens.cli.app import (
    DIRECTORY,
    Failure,
    HelpGroup,
    _load_rules,
    check_category,
    db_option,
    did_you_mean,
    echo,
    rules_option,
)
from tracelens.rulebook.origin import Wrappers


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

    check_category(category)
    rs = _load_rules(rules_dirs)
    items = [lr.rule for lr in rs.rules if category is None or lr.rule.category == category]
    items.sort(key=lambda r: r.id)
    if fmt == "json":
        echo(
            json.dumps(
                [
                    {"id": r.id, "category": r.category, "severity": r.severity, "title": r.title}
                    for r in items
                ],
                indent=2,
            )
        )
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
        raise Failure(
            f"no rule {rule_id!r}{did_you_mean(rule_id, [r.id for r in rs.rules])} (see 'tracelens rules list')"
        )
    echo(f"# {lr.path}")
    echo(lr.path.read_text(encoding="utf-8").rstrip())


@rules.command("lint")
@click.argument("dirs", nargs=-1, type=DIRECTORY)
@rules_option
def rules_lint(dirs: tuple[str, ...], rules_dirs: tuple[str, ...]) -> None:
    """Check rule files and report every problem at once (exit 1 if any).

    Example:

        tracelens rules lint my-rules/
    """
    from tracelens.authoring.checks import lint
    from tracelens.rulebook.load import load, rule_dirs

    roots = [Path(d) for d in dirs] if dirs else rule_dirs(rules_dirs)
    rs = load(roots, strict=False)
    problems = [str(e) for e in rs.errors] + lint(rs)
    for p in problems:
        echo(p)
    echo(f"{len(rs.rules)} rules, {len(problems)} problem(s)")
    if problems:
        sys.exit(1)


@rules.command("test")
@click.argument("dirs", nargs=-1, type=DIRECTORY)
@rules_option
@click.option("--rule", "only", default=None, help="Test one rule id only.")
@click.option(
    "--healthy", "healthy_dirs", multiple=True, type=DIRECTORY, help="Extra folder of healthy logs."
)
@click.option(
    "--no-transforms",
    is_flag=True,
    help="Skip the envelope transforms (container timestamps, kubectl/compose/Ray/torchrun/srun prefixes, CRLF, ANSI, lost indentation, Markdown quote, indented block, JSON lines).",
)
def rules_test(
    dirs: tuple[str, ...],
    rules_dirs: tuple[str, ...],
    only: str | None,
    healthy_dirs: tuple[str, ...],
    no_transforms: bool,
) -> None:
    """Every example diagnoses to its rule at rank 1, also wrapped in the envelopes real logs
    come in; no rule gives an error-level diagnosis on a healthy log. With --rules, your rules
    are tested together with the shipped ones; an example whose rule did not fire says which
    condition or needs literal did not match.

    Example:

        tracelens rules test --rules my-rules/ --rule vllm/my-failure
    """
    from tracelens.authoring.checks import run_tests
    from tracelens.rulebook.load import load, rule_dirs, shipped_healthy_dir

    roots = [Path(d) for d in dirs] if dirs else rule_dirs(rules_dirs)
    rs = load(roots, strict=False)
    for e in rs.errors:
        echo(f"ERROR {e}")
    healthy = [shipped_healthy_dir(), *(Path(h) for h in healthy_dirs)]
    if only and rs.get(only) is None:
        raise Failure(
            f"no rule {only!r}{did_you_mean(only, [r.id for r in rs.rules])} (see 'tracelens rules list')"
        )
    results = run_tests(rs, healthy, only=only, transforms=not no_transforms)
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


@rules.command("new")
@click.argument("rule_id")
@click.option(
    "--rules",
    "rules_dir",
    type=DIRECTORY,
    default="my-rules",
    show_default=True,
    help="Rules directory to write into (use it later with --rules).",
)
@click.option(
    "--from",
    "log",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A log of the failure: its originating failure becomes the conditions, the log the example.",
)
@click.option(
    "--category",
    default=None,
    help="Category (default: guessed from the failure; see rules/categories.yaml).",
)
def rules_new(rule_id: str, rules_dir: str, log: str | None, category: str | None) -> None:
    """Scaffold a rule (and its example log) to fill in.

    Example:

        tracelens rules new vllm/my-failure --from crash.log
    """
    from tracelens.authoring.scaffold import ScaffoldError, scaffold

    check_category(category)
    rs = _load_rules(())
    try:
        made = scaffold(
            rule_id, Path(rules_dir), Path(log) if log else None, category, Wrappers(rs.wrappers)
        )
    except ScaffoldError as exc:
        raise Failure(str(exc)) from None
    echo(f"wrote {made.rule_path}" + (f" and {made.example_path}" if made.example_path else ""))
    echo(
        f"next: fill in the TODOs, then: tracelens rules test --rules {rules_dir} --rule {rule_id}"
    )


@rules.command("coverage")
@rules_option
def rules_coverage(rules_dirs: tuple[str, ...]) -> None:
    """Print docs/coverage.md: the most-reported failure signatures and the diagnosis each gets.

    Example:

        tracelens rules coverage > docs/coverage.md
    """
    from tracelens.authoring.coverage import coverage_md, survey_path

    if not survey_path().is_file():
        raise Failure(f"{survey_path()}: the survey ships with the source tree, not the wheel")
    echo(coverage_md(_load_rules(rules_dirs)), nl=False)


@rules.command("preview")
@click.option(
    "--rules",
    "rules_dirs",
    multiple=True,
    required=True,
    type=DIRECTORY,
    help="The rules directory under review (repeatable).",
)
@db_option
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", help="Output format."
)
def rules_preview(rules_dirs: tuple[str, ...], db_path: str | None, fmt: str) -> None:
    """What new or changed rules would do to the stored incidents: which they would now catch,
    take from another rule, or lose.

    Example:

        tracelens rules preview --rules my-rules/
    """
    import json

    from tracelens.authoring.preview import preview
    from tracelens.incidents.store import Store, StoreError
    from tracelens.rulebook.load import load

    shipped = _load_rules(())
    reviewed = _load_rules(rules_dirs)
    ids = {lr.id for lr in load([Path(d) for d in rules_dirs], strict=False).rules}
    try:
        store = Store(db_path, create=False)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    changes = preview(store, shipped, reviewed, ids)
    store.close()
    if fmt == "json":
        echo(json.dumps([c.__dict__ for c in changes], indent=2))
        return
    if not changes:
        echo(f"no stored incident changes its first diagnosis ({len(ids)} rule(s) under review)")
        return
    for c in changes:
        echo(f"{c.kind:<7} #{c.incident_id:<5} {c.before} -> {c.after}  {c.title[:80]}")
    counts = {
        k: sum(1 for c in changes if c.kind == k) for k in ("catch", "take", "lose", "change")
    }
    echo(", ".join(f"{n} {k}" for k, n in counts.items() if n))
