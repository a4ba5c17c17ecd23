"""The command line: a thin layer over the library.

Exit codes: 0 the analysis ran; 1 ``--fail-on`` found a diagnosis at or above the severity,
or ``rules lint``/``rules test`` found problems; 2 usage or unreadable input (one line on
stderr).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import __version__
from .cliparse import Choice, CliError, PathType, argument, echo, group, option, quiet_stdout

SEVERITY_ORDER = {"warning": 0, "error": 1, "fatal": 2}
DIRECTORY = PathType(file_okay=False)
FILE = PathType(dir_okay=False)
ANY_PATH = PathType()


class Failure(CliError):
    """A one-line error, exit 2."""


def _load_rules(rules_dirs: tuple[str, ...]):
    from .rulebook import RuleError, default_rules

    try:
        return default_rules(tuple(rules_dirs))
    except RuleError as exc:
        raise Failure(str(exc)) from None


def _open(path: str):
    """Open the log and, when it is large, start scanning it in worker processes right away
    (before the heavier imports): (opened file, prefetch) or a one-line Failure."""
    from .scan import InputError, open_input, start_scan

    if path == "-" and sys.stdin.isatty():
        raise Failure("no log given: pass a FILE, or pipe a log into 'tracelens diagnose -'")
    try:
        opened = open_input(path)
    except InputError as exc:
        raise Failure(str(exc)) from None
    return opened, (start_scan(opened[0]) if path != "-" else None)


def _read(path: str, early=None):
    from .engine import parse_path
    from .scan import InputError

    opened, prefetch = early if early is not None else _open(path)
    try:
        return parse_path(path, opened, prefetch)
    except InputError as exc:
        raise Failure(str(exc)) from None
    finally:
        if prefetch is not None:
            prefetch.close()


@group("tracelens", version=__version__)
def cli() -> None:
    """tracelens: root causes for LLM-serving and PyTorch/CUDA/NCCL crash logs.

    Example:

        kubectl logs pod/vllm-0 | tracelens diagnose -
    """


@cli.command()
@argument("log", default="-", metavar="[FILE|-]")
@option("--format", "fmt", type=Choice(["text", "json", "markdown", "jira"]), default="text", show_default=True, help="Output format.")
@option("--rules", "rules_dirs", multiple=True, type=DIRECTORY, help="Extra rules directory (repeatable); also TRACELENS_RULES.")
@option("--fail-on", type=Choice(list(SEVERITY_ORDER)), default=None, help="Exit 1 when a diagnosis at or above this severity is found (CI gates).")
@option("--color/--no-color", default=None, help="Colour the text report (default: when stdout is a terminal).")
@option("--save", is_flag=True, help="Store the diagnosis as an incident (see 'tracelens incidents').")
@option("--db", "db_path", type=FILE, default=None, help="Incident database (default: TRACELENS_DB, else the user data dir).")
@option("--redact-regex", "redact_regex", multiple=True, help="With --save: also redact matches of this regex.")
@option("--no-redact", is_flag=True, help="With --save: store the log text as is.")
def diagnose(
    log: str, fmt: str, rules_dirs: tuple[str, ...], fail_on: str | None, color: bool | None,
    save: bool, db_path: str | None, redact_regex: tuple[str, ...], no_redact: bool,
) -> None:
    """Diagnose a crash log: root cause, evidence lines, remedies.

    When an incident database exists, the most similar past incidents are listed too.

    Example:

        tracelens diagnose server.log --format json
    """
    early = _open(log)  # a large log starts being scanned while the rest is imported
    from .engine import report
    from .render import render

    rules = _load_rules(rules_dirs)
    doc = _read(log, early)
    rep = report(doc, rules)
    _with_history(rep, db_path, save, redact_regex, no_redact)
    use_color = sys.stdout.isatty() if color is None else color
    failing = fail_on is not None and any(
        SEVERITY_ORDER[d.severity] >= SEVERITY_ORDER[fail_on] for d in rep.diagnoses
    )
    try:
        echo(render(rep, fmt, color=use_color and fmt == "text"), keep_ansi=use_color)
    except BrokenPipeError:  # a reader that stopped early (`| head`): the gate still counts
        quiet_stdout()
    if failing:
        sys.exit(1)


def _with_history(rep, db_path, save, redact_regex, no_redact) -> None:
    """Save the report as an incident and/or add similar past incidents to it."""
    from .paths import default_db

    path = Path(db_path) if db_path else default_db()
    if not save and not path.exists():
        return
    from .store import Store, StoreError
    from .similar import attach_similar, similar

    if not save:
        try:
            attach_similar(rep, path, limit=3)
        except StoreError as exc:
            raise Failure(str(exc)) from None
        return
    from .cli_incidents import make_redactor
    from .incident import save as save_incident

    redactor = make_redactor(redact_regex, no_redact)
    try:
        store = Store(path)
        rep.similar = similar(store, rep, limit=3)
        rec = save_incident(store, rep, redactor, source=rep.source)
        if rec is None:
            echo("tracelens: no failure in this log: nothing saved", err=True)
        else:
            what = "new incident" if rec.new else "seen before: incident"
            echo(f"tracelens: saved ({what} #{rec.incident_id}) in {store.path}", err=True)
        store.close()
    except StoreError as exc:
        raise Failure(str(exc)) from None


@cli.command()
@argument("log", default="-", metavar="[FILE|-]")
@option("--format", "fmt", type=Choice(["text", "json"]), default="text", show_default=True)
def parse(log: str, fmt: str) -> None:
    """Show what tracelens reads in a log: streams, tracebacks, error lines, facts.

    Example:

        tracelens parse server.log --format json
    """
    from .render.document import render_document_text
    from .render.jsonout import document_dict
    import json

    doc = _read(log)
    if fmt == "json":
        data = {"diagnoses": [], **document_dict(doc)}
        echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        echo(render_document_text(doc))


@cli.command()
@argument("rule_id")
@option("--rules", "rules_dirs", multiple=True, type=DIRECTORY)
def explain(rule_id: str, rules_dirs: tuple[str, ...]) -> None:
    """Explain a rule: what it detects, why, what to do.

    Example:

        tracelens explain vllm/attention/mla-fp8-kv-unsupported
    """
    from .render.rules import render_rule

    rules = _load_rules(rules_dirs)
    lr = rules.get(rule_id)
    if lr is None:
        raise Failure(f"no rule {rule_id!r} (see 'tracelens rules list')")
    echo(render_rule(lr))


@cli.group()
def rules() -> None:
    """List, show, lint and test rules.

    Example:

        tracelens rules test
    """


@rules.command("list")
@option("--rules", "rules_dirs", multiple=True, type=DIRECTORY)
@option("--category", default=None, help="Only rules of this category.")
@option("--format", "fmt", type=Choice(["text", "json"]), default="text")
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
@argument("rule_id")
@option("--rules", "rules_dirs", multiple=True, type=DIRECTORY)
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
@argument("dirs", nargs=-1, type=DIRECTORY)
def rules_lint(dirs: tuple[str, ...]) -> None:
    """Check rule files and report every problem at once (exit 1 if any).

    Example:

        tracelens rules lint my-rules/
    """
    from .rulebook import load, rule_dirs
    from .ruletest import lint

    roots = [Path(d) for d in dirs] if dirs else rule_dirs()
    rs = load(roots, strict=False)
    problems = [str(e) for e in rs.errors] + lint(rs)
    for p in problems:
        echo(p)
    echo(f"{len(rs.rules)} rules, {len(problems)} problem(s)")
    if problems:
        sys.exit(1)


@rules.command("test")
@argument("dirs", nargs=-1, type=DIRECTORY)
@option("--rule", "only", default=None, help="Test one rule id only.")
@option("--healthy", "healthy_dirs", multiple=True, type=DIRECTORY, help="Extra folder of healthy logs.")
def rules_test(dirs: tuple[str, ...], only: str | None, healthy_dirs: tuple[str, ...]) -> None:
    """Every example diagnoses to its rule at rank 1; no rule fires on a healthy log.

    Example:

        tracelens rules test --rule vllm/attention/mla-fp8-kv-unsupported
    """
    from .rulebook import load, rule_dirs, shipped_healthy_dir
    from .ruletest import run_tests

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
    from .catalogue import schema_json

    echo(schema_json(), nl=False)


@rules.command("catalogue")
@option("--rules", "rules_dirs", multiple=True, type=DIRECTORY)
def rules_catalogue(rules_dirs: tuple[str, ...]) -> None:
    """Print the rule catalogue as Markdown.

    Example:

        tracelens rules catalogue > docs/rules.md
    """
    from .catalogue import catalogue_md

    echo(catalogue_md(_load_rules(rules_dirs)), nl=False)


from . import cli_incidents  # noqa: E402,F401  (registers ingest, incidents, similar, ticket)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: never shows a traceback of tracelens itself."""
    # tracelens uses no pydantic plugins; looking them up scans every installed package's
    # metadata on start-up
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        try:
            cli.main(sys.argv[1:] if argv is None else list(argv))
        except (EOFError, KeyboardInterrupt):
            echo(err=True)
            echo("tracelens: aborted", err=True)
            return 130
    except CliError as exc:  # usage errors name the command's help; failures are one line
        echo(exc.line(), err=True)
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else 1
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug in tracelens: one line, not a traceback
        echo(f"tracelens: internal error: {type(exc).__name__}: {exc}", err=True)
        return 3
    return 0
