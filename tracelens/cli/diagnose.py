"""``diagnose``, ``parse`` and ``explain``: one log or one rule, read and explained."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracelens.cli.app import (
    FILE,
    SEVERITY_ORDER,
    Failure,
    _load_rules,
    _open,
    _read,
    did_you_mean,
    echo,
    make_redactor,
    quiet_stdout,
    rules_option,
)


@click.command()
@click.argument("logs", nargs=-1, metavar="[FILE...|-]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "jira"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@rules_option
@click.option(
    "--fail-on",
    type=click.Choice(list(SEVERITY_ORDER)),
    default=None,
    help="Exit 1 when a diagnosis at or above this severity is found (CI gates).",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report (default: when stdout is a terminal).",
)
@click.option(
    "--save", is_flag=True, help="Store the diagnosis as an incident (see 'tracelens incidents')."
)
@click.option(
    "--db",
    "db_path",
    type=FILE,
    default=None,
    help="Incident database (default: TRACELENS_DB, else the user data dir).",
)
@click.option(
    "--redact-regex",
    "redact_regex",
    multiple=True,
    help="With --save: also redact matches of this regex.",
)
@click.option("--no-redact", is_flag=True, help="With --save: store the log text as is.")
@click.option(
    "--full",
    is_flag=True,
    help="Text report: every diagnosis with all its evidence, remedies and references (default: compact).",
)
def diagnose(
    logs: tuple[str, ...],
    fmt: str,
    rules_dirs: tuple[str, ...],
    fail_on: str | None,
    color: bool | None,
    save: bool,
    db_path: str | None,
    redact_regex: tuple[str, ...],
    no_redact: bool,
    full: bool,
) -> None:
    """Diagnose a crash log: root cause, evidence lines, remedies.

    When an incident database exists, the most similar past incidents are listed too. Several
    logs of one job (one a rank or a node) are diagnosed each in turn, after a summary that
    lists the failures before the symptoms (JSON: a list of reports).

    Example:

        tracelens diagnose server.log --format json
        tracelens diagnose logs/rank*.log
    """
    if len(logs) > 1:
        _diagnose_many(
            logs, fmt, rules_dirs, fail_on, color, save, db_path, redact_regex, no_redact, full
        )
        return
    log = logs[0] if logs else "-"
    early = _open(log)  # a large log starts being scanned while the rest is imported
    from tracelens.engine import report
    from tracelens.render import render

    rules = _load_rules(rules_dirs)
    if early[1] is not None:
        _while_scanning(fmt)
    doc = _read(log, early)
    rep = report(doc, rules)
    _with_history(rep, db_path, save, redact_regex, no_redact)
    use_color = sys.stdout.isatty() if color is None else color
    failing = _trips(rep, fail_on)
    try:
        if fmt == "json":  # written as it is encoded: a huge report is never one string in memory
            from tracelens.render.jsonout import write_json

            write_json(rep, sys.stdout)
        else:
            width = _width()
            echo(
                render(rep, fmt, color=use_color and fmt == "text", full=full, width=width),
                keep_ansi=use_color,
            )
    except BrokenPipeError:  # a reader that stopped early (`| head`): the gate still counts
        quiet_stdout()
    if failing:
        sys.exit(1)


def _while_scanning(fmt: str) -> None:
    """A large log is being scanned in other processes: import now what reading its windows,
    comparing versions and the text report will need, instead of after the scan (a small log
    imports them only when it needs them)."""
    import packaging.specifiers  # noqa: F401
    import packaging.version  # noqa: F401

    import tracelens.read.logread  # noqa: F401

    if fmt == "text":
        import tracelens.render.text  # noqa: F401


def _width() -> int:
    """The terminal's width for the text report (0: not a terminal, no wrapping)."""
    if not sys.stdout.isatty():
        return 0
    import shutil  # (3 ms to import) only to fit a terminal

    return shutil.get_terminal_size(fallback=(100, 24)).columns - 1


def _trips(rep, fail_on: str | None) -> bool:
    """Whether ``--fail-on`` trips on this report."""
    return fail_on is not None and any(
        SEVERITY_ORDER[d.severity] >= SEVERITY_ORDER[fail_on] for d in rep.diagnoses
    )


def _diagnose_many(
    logs, fmt, rules_dirs, fail_on, color, save, db_path, redact_regex, no_redact, full
) -> None:
    """Several logs: each read and diagnosed in turn (one that cannot be read is named on
    stderr, and the command exits 2 after the others); a summary first, failures before
    symptoms."""
    from tracelens.engine import report
    from tracelens.render import render
    from tracelens.render.common import many_summary, ranked

    if list(logs).count("-") > 1:
        raise Failure("stdin ('-') can be read only once")
    rules = _load_rules(rules_dirs)
    reports, unreadable = [], False
    for log in logs:
        try:
            rep = report(_read(log, _open(log)), rules)
            _with_history(rep, db_path, save, redact_regex, no_redact)
        except Failure as exc:
            exc.show()
            unreadable = True
            continue
        reports.append(rep)
    reports = ranked(reports)  # the log to read first on top, in every format
    use_color = sys.stdout.isatty() if color is None else color
    try:
        if fmt == "json":
            from tracelens.render.jsonout import write_json_list

            write_json_list(reports, sys.stdout)
        else:
            width = _width()
            parts = [many_summary(reports, fmt)]
            parts += [
                render(rep, fmt, color=use_color and fmt == "text", full=full, width=width)
                for rep in reports
            ]
            echo("\n\n".join(parts), keep_ansi=use_color)
    except BrokenPipeError:
        quiet_stdout()
    if unreadable:
        sys.exit(2)
    if any(_trips(rep, fail_on) for rep in reports):
        sys.exit(1)


def _with_history(rep, db_path, save, redact_regex, no_redact) -> None:
    """Save the report as an incident and/or add similar past incidents to it."""
    from tracelens.paths import default_db

    path = Path(db_path) if db_path else default_db()
    if not save and not path.exists():
        return
    from tracelens.incidents.connection import StoreError
    from tracelens.incidents.similar import attach_similar, similar

    if not save:
        try:
            attach_similar(rep, path, limit=3)
        except StoreError as exc:
            raise Failure(str(exc)) from None
        return
    from tracelens.incidents.incident import save as save_incident
    from tracelens.incidents.store import Store

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


@click.command()
@click.argument("log", default="-", metavar="[FILE|-]")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def parse(log: str, fmt: str) -> None:
    """Show what tracelens reads in a log: streams, tracebacks, error lines, facts.

    Example:

        tracelens parse server.log --format json
    """
    import json

    from tracelens.render.document import render_document_text
    from tracelens.render.jsonout import document_dict

    doc = _read(log)
    if fmt == "json":
        data = {"diagnoses": [], **document_dict(doc)}
        echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        echo(render_document_text(doc))


@click.command()
@click.argument("rule_id")
@rules_option
def explain(rule_id: str, rules_dirs: tuple[str, ...]) -> None:
    """Explain a rule: what it detects, why, what to do.

    Example:

        tracelens explain vllm/attention/mla-fp8-kv-unsupported
    """
    from tracelens.render.rules import render_rule

    rules = _load_rules(rules_dirs)
    lr = rules.get(rule_id)
    if lr is None:
        raise Failure(
            f"no rule {rule_id!r}{did_you_mean(rule_id, [r.id for r in rules.rules])} (see 'tracelens rules list')"
        )
    echo(render_rule(lr))
