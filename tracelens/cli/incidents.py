"""CLI commands over the incident store: incidents, similar, ticket, tui (ingest: :mod:`tracelens.cli.ingest`)."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracelens.pyregex import compile_re

if TYPE_CHECKING:
    from tracelens.incidents.records import Incident
    from tracelens.models import SimilarIncident

from tracelens.cli.app import (
    FILE,
    INCIDENT_ID,
    Failure,
    HelpGroup,
    _load_rules,
    _read,
    check_category,
    db_option,
    echo,
    long_running,
    make_redactor,
    open_store,
    redact_options,
    rules_option,
)


def _incident_json(inc: Incident | SimilarIncident) -> dict:
    """An incident or a similar-incident hit as JSON for scripts."""
    from tracelens.incidents.records import Incident, incident_dict
    from tracelens.models import to_dict

    return incident_dict(inc) if isinstance(inc, Incident) else to_dict(inc)


@click.group(cls=HelpGroup)
def incidents() -> None:
    """Browse and update past incidents.

    Example:

        tracelens incidents list --status open --since 2025-01-01
    """


def parse_since(value: str | None, now: datetime | None = None) -> str | None:
    """``--since``: a date (2025-01-31), a date and time (2025-01-31T08:00), an age (3d, 12h,
    2w, 30m), ``today`` or ``yesterday``, as the ISO text stored timestamps compare with.

    >>> parse_since("2d", datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc))
    '2025-01-29T12:00:00'
    >>> parse_since("yesterday", datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc))
    '2025-01-30T00:00:00'
    """
    if value is None:
        return None
    now = now or datetime.now(timezone.utc)
    text = value.strip().lower()
    ages = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    if text in ("today", "yesterday"):
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        if text == "yesterday":
            day -= timedelta(days=1)
        return day.strftime("%Y-%m-%dT%H:%M:%S")
    if len(text) > 1 and text[:-1].isdigit() and text[-1] in ages:
        return (now - timedelta(**{ages[text[-1]]: int(text[:-1])})).strftime("%Y-%m-%dT%H:%M:%S")
    try:
        return datetime.fromisoformat(value.strip()).strftime("%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise Failure(
            f"--since {value!r}: give a date (2025-01-31), a date and time (2025-01-31T08:00), "
            "an age (3d, 12h, 2w) or today/yesterday"
        ) from None


@incidents.command("list")
@db_option
@click.option(
    "--status",
    type=click.Choice(["open", "resolved", "ignored"]),
    default=None,
    help="Only incidents with this status.",
)
@click.option(
    "--category", default=None, help="Only incidents of this category (see rules/categories.yaml)."
)
@click.option(
    "--rule",
    "rule_id",
    default=None,
    help="Only incidents whose diagnosis is this rule (e.g. torch/gpu-oom).",
)
@click.option(
    "--since",
    default=None,
    help="Only incidents seen since: a date (2025-01-31), an age (3d, 12h, 2w), today or yesterday.",
)
@click.option(
    "--search", default=None, help="Full-text search over titles, messages and resolutions."
)
@click.option(
    "--limit",
    type=click.IntRange(1, 2**31),
    default=50,
    show_default=True,
    help="Show at most this many.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", help="Output format."
)
def incidents_list(db_path, status, category, rule_id, since, search, limit, fmt) -> None:
    """List incidents, most recently seen first.

    Example:

        tracelens incidents list --since 2d --search "attention backend"
    """

    check_category(category)
    since = parse_since(since)
    store = open_store(db_path, create=False)
    filters = {"status": status, "category": category, "rule_id": rule_id}
    filters |= {"since": since, "search": search}
    rows = store.incidents(**filters, limit=limit)
    if fmt == "json":
        echo(json.dumps([_incident_json(r) for r in rows], indent=2))
        return
    if not rows:
        echo("no incidents")
        return
    total = store.count(**filters)
    width = shutil.get_terminal_size(fallback=(120, 24)).columns
    head = (
        f"{'ID':<6} {'LAST SEEN':<16}  {'SEEN':>5}  {'STATUS':<8} {'SEVERITY':<8} {'CATEGORY':<28} "
    )
    room = max(width - len(head) - 1, 20)
    echo(head + "TITLE")
    for r in rows:
        title = r.title if len(r.title) <= room else r.title[: room - 1] + "…"
        echo(
            f"#{r.id:<5} {r.last_seen[:16]:<16}  {r.count:>5}  {r.status:<8} "
            f"{(r.severity or '-'):<8} {r.category:<28} {title}"
        )
    echo(
        f"{len(rows)} of {total} incident(s)"
        + (" (--limit to see more)" if total > len(rows) else "")
    )


@incidents.command("show")
@click.argument("incident_id", type=INCIDENT_ID)
@db_option
@click.option("--explain", is_flag=True, help="Show the clear text each fingerprint was made from.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def incidents_show(incident_id, db_path, explain, fmt) -> None:
    """Show one incident: what it is, when it was seen, what fixed it.

    Example:

        tracelens incidents show 12 --explain
    """
    from tracelens.incidents.store import StoreError

    store = open_store(db_path, create=False)
    try:
        inc = store.incident(incident_id)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    stored = store.latest_occurrence(incident_id)
    excerpt, rep = stored.excerpt.numbered(), stored.report
    if fmt == "json":
        from tracelens.render.jsonout import report_dict

        data = _incident_json(inc)
        data["report"] = report_dict(rep) if rep else {}
        data["report"].pop("document", None)
        data["excerpt"] = excerpt
        echo(json.dumps(data, indent=2))
        return
    occurrences, tickets = inc.occurrences or [], inc.tickets or []
    echo(f"#{inc.id}  {inc.title}")
    echo(f"  category {inc.category} · rule {inc.rule_id or '-'} · status {inc.status}")
    echo(f"  seen {inc.count} time(s): first {inc.first_seen}, last {inc.last_seen}")
    if inc.remedy_worked or inc.resolution_note:
        echo(f"  resolved with: {inc.remedy_worked or '-'}; note: {inc.resolution_note or '-'}")
    for t in tickets:
        echo(f"  ticket: {t.ref} ({t.created_at})")
    if rep is not None and rep.diagnoses:
        echo("\n  Root cause: " + rep.diagnoses[0].root_cause)
        echo("  Remedies:")
        for k, r in enumerate(rep.diagnoses[0].remedies, 1):
            echo(f"    {k}. {r.title}")
    echo("\n  Occurrences:")
    for occ in occurrences[-10:]:
        echo(f"    {occ.seen_at}  {occ.source}" + (f"  host {occ.host}" if occ.host else ""))
    if explain:
        echo("\n  Fingerprints (hash <- clear text):")
        echo(f"    coarse {inc.fingerprint} <- {inc.signature}")
        fines = {(o.fingerprint_fine, o.signature_fine) for o in occurrences}
        for fp, text in sorted(fines):
            echo(f"    fine   {fp} <- {text}")
    if excerpt:
        echo("\n  Latest excerpt:")
        for line in excerpt.splitlines()[:40]:
            echo("    " + line)


@incidents.command("resolve")
@click.argument("incident_id", type=INCIDENT_ID)
@db_option
@click.option(
    "--remedy",
    type=int,
    default=None,
    help="Number of the remedy that worked (as listed by 'show').",
)
@click.option("--note", default=None, help="What was done.")
def incidents_resolve(incident_id, db_path, remedy, note) -> None:
    """Mark an incident resolved, with the remedy that worked and a note.

    Example:

        tracelens incidents resolve 12 --remedy 2 --note "removed kv_cache_quant_algo"
    """
    from tracelens.incidents.store import StoreError

    store = open_store(db_path, create=False)
    try:
        remedy_title = None
        if remedy is not None:
            rep = store.latest_occurrence(incident_id).report
            remedies = rep.diagnoses[0].remedies if rep and rep.diagnoses else []
            store.incident(incident_id)
            if not 1 <= remedy <= len(remedies):
                raise Failure(
                    f"incident {incident_id} has {len(remedies)} remed{'y' if len(remedies) == 1 else 'ies'}; --remedy {remedy} is not one"
                )
            remedy_title = remedies[remedy - 1].title
        store.resolve(incident_id, remedy_title, note)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    echo(f"incident {incident_id} resolved" + (f" with: {remedy_title}" if remedy_title else ""))


@incidents.command("attach")
@click.argument("incident_id", type=INCIDENT_ID)
@click.argument("ref")
@db_option
def incidents_attach(incident_id, ref, db_path) -> None:
    """Record a ticket link (URL or key such as OPS-1234) on an incident.

    Example:

        tracelens incidents attach 12 https://tracker.example.org/browse/OPS-1234
    """
    from tracelens.incidents.store import StoreError

    if not _TICKET_REF.match(ref):
        raise Failure(f"{ref!r} is not a ticket: give an http(s) URL or a key such as OPS-1234")
    store = open_store(db_path, create=False)
    try:
        store.attach(incident_id, ref)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    echo(f"incident {incident_id}: attached {ref}")


_TICKET_REF = compile_re(r"^(?:https?://[^\s/$.?#][^\s]*|[A-Z][A-Z0-9_]+-\d+|#\d+)$")


def _set_status(incident_id: int, db_path: str | None, status: str) -> None:
    from tracelens.incidents.store import StoreError

    store = open_store(db_path, create=False)
    try:
        store.set_status(incident_id, status)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    echo(f"incident {incident_id}: {status}")


@incidents.command("ignore")
@click.argument("incident_id", type=INCIDENT_ID)
@db_option
def incidents_ignore(incident_id, db_path) -> None:
    """Mark an incident ignored (noise you do not want to see again; list it with --status ignored).

    Example:

        tracelens incidents ignore 12
    """
    _set_status(incident_id, db_path, "ignored")


@incidents.command("reopen")
@click.argument("incident_id", type=INCIDENT_ID)
@db_option
def incidents_reopen(incident_id, db_path) -> None:
    """Mark a resolved or ignored incident open again.

    Example:

        tracelens incidents reopen 12
    """
    _set_status(incident_id, db_path, "open")


@click.command()
@click.argument("log", default="-", metavar="[FILE|-]")
@db_option
@click.option("--limit", type=click.IntRange(1, 2**31), default=5, show_default=True)
@click.option(
    "--min-score",
    type=click.FloatRange(0, 100),
    default=60.0,
    show_default=True,
    help="Leave out incidents that score less (0-100; how 60 was chosen: docs/similar.md).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@rules_option
def similar(log, db_path, limit, min_score, fmt, rules_dirs) -> None:
    """Past incidents that look like this log, best first, with what fixed them.

    Example:

        tracelens similar crash.log --format json
    """
    from tracelens.engine import report
    from tracelens.incidents.similar import similar as find

    rules = _load_rules(rules_dirs)
    rep = report(_read(log), rules)
    store = open_store(db_path, create=False)
    hits = find(store, rep, limit=limit, min_score=min_score)
    if fmt == "json":
        echo(json.dumps([_incident_json(h) for h in hits], indent=2))
        return
    if not hits:
        echo("no similar incident")
    for h in hits:
        fix = f" — fixed by: {h.fix}" if h.fix else ""
        echo(f"{h.score:5.1f}  #{h.id:<5} x{h.count:<4} {h.status:<8} {h.title[:90]}{fix}")


@click.command()
@click.argument("target")
@db_option
@redact_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "jira", "json", "github-url"]),
    default="markdown",
    show_default=True,
)
@click.option("--repo", default=None, help="OWNER/NAME for --format github-url.")
@click.option("--output", "-o", type=FILE, default=None, help="Write the ticket to a file.")
@rules_option
def ticket(target, db_path, redact_regex, no_redact, fmt, repo, output, rules_dirs) -> None:
    """A ready ticket body for an incident (ID) or a log (FILE or -), secrets redacted.

    Example:

        tracelens ticket 12 --format github-url --repo vllm-project/vllm
    """
    from tracelens.incidents.incident import live_ticket, stored_ticket
    from tracelens.incidents.ticket import render_ticket

    redactor = make_redactor(redact_regex, no_redact)
    incident = None
    if target.isascii() and target.isdigit() and not Path(target).exists():
        if INCIDENT_ID.max is not None and int(target) > INCIDENT_ID.max:
            raise Failure(f"no incident {target}")
        from tracelens.incidents.store import StoreError

        store = open_store(db_path, create=False)
        try:
            incident = store.incident(int(target))
        except StoreError as exc:
            raise Failure(str(exc)) from None
        stored = store.latest_occurrence(int(target))
        made = stored_ticket(stored.report, stored.excerpt, incident, redactor)
    else:
        from tracelens.engine import report

        made = live_ticket(report(_read(target), _load_rules(rules_dirs)), redactor)
    try:
        text = render_ticket(fmt, made.report, made.excerpt, made.incident, repo)
    except ValueError as exc:
        raise Failure(str(exc)) from None
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise Failure(f"{output}: cannot write ({exc.strerror or exc})") from None
        echo(f"wrote {output}")
    else:
        echo(text, nl=not text.endswith("\n"))


@click.command()
@click.argument("log", required=False, metavar="[FILE|-]")
@db_option
@rules_option
def tui(log, db_path, rules_dirs) -> None:
    """Browse incidents and rules in the terminal; with FILE (or - for a pipe), open on its
    diagnosis.

    Example:

        kubectl logs pod/vllm-0 | tracelens tui -
    """
    long_running()
    import os

    from tracelens.engine import parse, report
    from tracelens.incidents.similar import attach_similar
    from tracelens.incidents.store import StoreError, default_path
    from tracelens.tui import make_app

    rules = _load_rules(rules_dirs)
    rep = None
    if log == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise Failure("no log on stdin: pipe one in, or give a FILE")
        data = sys.stdin.buffer.read()
        try:  # the pipe is read; keys come from the terminal
            fd = os.open("/dev/tty", os.O_RDONLY)
        except OSError:
            raise Failure("no terminal to read keys from (/dev/tty)") from None
        os.dup2(fd, 0)
        os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        rep = report(parse(data, "<stdin>"), rules)
    elif log:
        rep = report(_read(log), rules)
    path = Path(db_path) if db_path else default_path()
    if rep is not None:
        try:
            attach_similar(rep, path, limit=5)
        except StoreError as exc:
            raise Failure(str(exc)) from None
    make_app(db_path=path, rules=rules, report=rep).run()
