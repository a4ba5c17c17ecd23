"""``tracelens top``: what fails most across everything ingested, by fingerprint or by rule
(:mod:`tracelens.fleet.top`)."""

from __future__ import annotations

import json
import shutil

import click

from tracelens.cli.app import db_option, echo, open_store
from tracelens.cli.incidents import parse_since


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"


def _table(rows: list[dict], by: str) -> list[str]:
    """The rows as a table as wide as the terminal."""
    width = shutil.get_terminal_size(fallback=(120, 24)).columns
    if by == "rule":
        cat_w = max(len("CATEGORY"), *(len(r["category"] or "-") for r in rows))
        head = f"{'COUNT':>6}  {'INCIDENTS':>9}  {'FIRST SEEN':<16}  {'LAST SEEN':<16}  "
        lines = [head + f"{'CATEGORY':<{cat_w}}  RULE"]
        for r in rows:
            lines.append(
                f"{r['count']:>6}  {r['incidents']:>9}  {r['first_seen'][:16]:<16}  "
                f"{r['last_seen'][:16]:<16}  {(r['category'] or '-'):<{cat_w}}  "
                f"{r['rule_id'] or '- (no rule: unclassified)'}"
            )
        return lines
    head = f"{'COUNT':>6}  {'ID':<6} {'FINGERPRINT':<12}  {'FIRST SEEN':<16}  {'LAST SEEN':<16}  "
    rule_w = max([len("RULE")] + [len(r["rule_id"] or "-") for r in rows])
    rule_w = min(rule_w, max(12, (width - len(head)) // 2))
    room = max(width - len(head) - rule_w - 3, 20)
    lines = [head + f"{'RULE':<{rule_w}}  TITLE"]
    for r in rows:
        lines.append(
            f"{r['count']:>6}  #{r['id']:<5} {r['fingerprint'][:12]:<12}  {r['first_seen'][:16]:<16}  "
            f"{r['last_seen'][:16]:<16}  {_cut(r['rule_id'] or '-', rule_w):<{rule_w}}  "
            f"{_cut(r['title'] or '', room)}"
        )
    return lines


@click.command()
@db_option
@click.option(
    "--by",
    type=click.Choice(["fingerprint", "rule"]),
    default="fingerprint",
    show_default=True,
    help="Count each incident (fingerprint: the same bug) or each rule (all its incidents).",
)
@click.option(
    "--since",
    default=None,
    help="Only count what was seen since: a date (2025-01-31), an age (3d, 12h, 2w), today or "
    "yesterday.",
)
@click.option(
    "--limit",
    type=click.IntRange(1, 2**31),
    default=20,
    show_default=True,
    help="Show at most this many.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", help="Output format."
)
def top(db_path, by, since, limit, fmt) -> None:
    """What fails most: incidents counted by fingerprint or by rule, with when each was first
    and last seen, most first.

    Example:

        tracelens top --since 1d --by rule
    """
    from tracelens.fleet.top import top as counts

    since = parse_since(since)
    store = open_store(db_path, create=False)
    rows, total = counts(store, by=by, since=since, limit=limit)
    if fmt == "json":
        echo(json.dumps(rows, indent=2))
        return
    groups = "rule(s)" if by == "rule" else "incident(s)"
    if not rows:
        echo(f"no incidents{f' seen since {since}' if since else ''}")
        return
    for line in _table(rows, by):
        echo(line)
    echo(
        f"{len(rows)} of {total} {groups}"
        + (f" seen since {since}" if since else "")
        + (" (--limit to see more)" if total > len(rows) else "")
    )
