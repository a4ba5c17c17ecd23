"""Ticket bodies: Markdown, Jira, JSON and a prefilled GitHub new-issue URL.

Built from a report in its JSON form (live, or stored with an incident) and a redacted
excerpt of the log, so the same code serves ``ticket FILE`` and ``ticket ID``.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from tracelens.render.common import (
    fence,
    important_facts,
    jira_block,
    jira_text,
    md_code,
    md_facts_table,
    md_line,
    md_link,
    md_remedies,
    md_text,
)

GITHUB_URL_LIMIT = 8000
_MIN_EXCERPT = 6
"""Lines of log excerpt a link keeps before it drops the excerpt."""
"""Stay under the length GitHub accepts for a new-issue URL."""
TICKET_FORMATS = ("markdown", "jira", "json", "github-url")
GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
"""OWNER/NAME as GitHub allows them: an owner of up to 39 letters, digits and hyphens, a name
of up to 100 letters, digits, ``.``, ``_`` and ``-``; nothing that could add to the URL."""


def _top(report: dict) -> dict | None:
    diags = report.get("diagnoses") or []
    return diags[0] if diags else None


def summary(report: dict, incident: dict | None = None) -> str:
    top = _top(report)
    if top:
        return top["title"]
    if incident:
        return incident.get("title") or "Unclassified failure"
    return "Unclassified failure"


def _env_rows(report: dict) -> list[tuple[str, str]]:
    facts = report.get("facts") or {}
    return important_facts(facts)


def _env_and_excerpt(report: dict, excerpt: str) -> list[str]:
    out: list[str] = []
    rows = _env_rows(report)
    if rows:
        out += ["### Environment", ""] + md_facts_table(rows) + [""]
    if excerpt:
        out += ["### Log excerpt", "", fence(excerpt, "text"), ""]
    return out


def markdown(
    report: dict,
    excerpt: str,
    incident: dict | None = None,
    *,
    with_excerpt: bool = True,
    compact: bool = False,
) -> str:
    """The ticket in Markdown; every text that came from a log is escaped (:func:`md_text`).
    ``compact`` (for a link that must stay short): no incident bookkeeping; the environment
    and the excerpt right after the root cause; remedy titles only; no does-not-help list;
    three references."""
    top = _top(report)
    out = [f"## {md_line(summary(report, incident))}", ""]
    if incident and not compact:
        out += [
            f"Incident #{incident['id']} · seen {incident['count']} time(s), first {md_line(incident['first_seen'])}, "
            f"last {md_line(incident['last_seen'])} · status {md_line(incident['status'])}",
            "",
        ]
    if top:
        out += [
            f"**Category:** {md_code(top['category'])} · **severity:** {md_line(top['severity'])} · **rule:** {md_code(top['rule_id'])}",
            "",
        ]
        out += ["### Root cause", "", md_text(top["root_cause"]), ""]
        if compact:  # what a maintainer needs first, before the link's length runs out
            out += _env_and_excerpt(report, excerpt if with_excerpt else "")
        for note in [] if compact else top.get("notes") or []:
            out += [f"> {md_line(note)}", ""]
        if top.get("remedies") and compact:
            out += ["### Remedies", ""]
            out += [f"{k}. {md_line(r['title'])}" for k, r in enumerate(top["remedies"][:3], 1)]
            out.append("")
        elif top.get("remedies"):
            worked = (incident or {}).get("remedy_worked")
            out += ["### Remedies", ""]
            out += md_remedies(
                top["remedies"],
                lambda r: " ✅ worked here before" if worked and worked == r["title"] else "",
            )
            out.append("")
        if top.get("does_not_help") and not compact:
            out += (
                ["### Does not help", ""] + [f"- {md_line(t)}" for t in top["does_not_help"]] + [""]
            )
    elif incident:
        out += ["No rule recognises this failure yet.", ""]
    if incident and incident.get("resolution_note"):
        out += ["### Resolution", "", md_text(incident["resolution_note"]), ""]
    if not (compact and top):
        out += _env_and_excerpt(report, excerpt if with_excerpt else "")
    if top and top.get("references"):
        refs = top["references"][:3] if compact else top["references"]
        out += ["### References", ""] + [f"- {md_link(u)}" for u in refs] + [""]
    out.append("_Diagnosed by tracelens._")
    return "\n".join(out) + "\n"


def jira(report: dict, excerpt: str, incident: dict | None = None) -> str:
    """The ticket in Jira wiki markup; text from a log is escaped (:func:`jira_text`) and
    blocks cannot be closed from inside (:func:`jira_block`)."""
    top = _top(report)
    out = [f"h2. {jira_text(summary(report, incident))}", ""]
    if incident:
        out += [
            f"Incident #{incident['id']}, seen {incident['count']} time(s), status {jira_text(incident['status'])}",
            "",
        ]
    if top:
        out += [
            f"*Category:* {jira_text(top['category'])} | *severity:* {jira_text(top['severity'])} | *rule:* {jira_text(top['rule_id'])}",
            "",
        ]
        out += ["h3. Root cause", jira_text(top["root_cause"]), ""]
        if top.get("remedies"):
            out.append("h3. Remedies")
            for r in top["remedies"]:
                out.append(f"# {jira_text(r['title'])}")
                for step in r.get("steps") or []:
                    out.append(f"## {jira_text(step)}")
                if r.get("commands"):
                    out.append(jira_block("\n".join(r["commands"])))
            out.append("")
        if top.get("does_not_help"):
            out += (
                ["h3. Does not help"] + [f"* {jira_text(t)}" for t in top["does_not_help"]] + [""]
            )
    rows = _env_rows(report)
    if rows:
        out += (
            ["h3. Environment", "||fact||value||"]
            + [f"|{jira_text(n)}|{jira_text(v) or ' '}|" for n, v in rows]
            + [""]
        )
    if excerpt:
        out += ["h3. Log excerpt", jira_block(excerpt)]
    return "\n".join(out) + "\n"


def as_json(report: dict, excerpt: str, incident: dict | None = None) -> str:
    top = _top(report)
    data = {
        "summary": summary(report, incident),
        "incident": {
            k: incident[k]
            for k in ("id", "fingerprint", "count", "first_seen", "last_seen", "status")
        }
        if incident
        else None,
        "diagnosis": top,
        "environment": dict(_env_rows(report)),
        "excerpt": excerpt,
        "body_markdown": markdown(report, excerpt, incident),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def github_url(repo: str, report: dict, excerpt: str, incident: dict | None = None) -> str:
    """A new-issue URL with title and body filled, trimmed to stay under the length limit:
    first the excerpt is shortened, then dropped, then the body is cut."""
    if not GITHUB_REPO.fullmatch(repo):
        raise ValueError(
            f"--repo must be OWNER/NAME (letters, digits, '-', and '.' or '_' in the name), not {repo[:80]!r}"
        )
    base = (
        f"https://github.com/{repo}/issues/new?title={quote(summary(report, incident)[:200])}&body="
    )
    lines = excerpt.splitlines()
    while True:
        body = markdown(report, "\n".join(lines), incident, with_excerpt=bool(lines), compact=True)
        url = base + quote(body)
        if len(url) <= GITHUB_URL_LIMIT:
            return url
        if len(lines) > _MIN_EXCERPT:  # a shorter excerpt, cut at line boundaries
            lines = lines[: max(_MIN_EXCERPT, len(lines) // 2)]
            continue
        if lines:
            lines = []
            continue
        break
    note = "_(shortened to fit a link: the full diagnosis and log excerpt are in the log itself)_"
    room = GITHUB_URL_LIMIT - len(base) - len(quote("\n" + note + "\n"))
    kept: list[str] = []
    for line in body.splitlines():  # whole lines only: never a word cut in half
        if len(quote("\n".join([*kept, line]))) > room:
            break
        kept.append(line)
    return base + quote("\n".join([*kept, note]) + "\n")


def render_ticket(
    fmt: str, report: dict, excerpt: str, incident: dict | None = None, repo: str | None = None
) -> str:
    if fmt == "markdown":
        return markdown(report, excerpt, incident)
    if fmt == "jira":
        return jira(report, excerpt, incident)
    if fmt == "json":
        return as_json(report, excerpt, incident)
    if fmt == "github-url":
        if not repo:
            raise ValueError("--format github-url needs --repo OWNER/NAME")
        return github_url(repo, report, excerpt, incident)
    raise ValueError(f"unknown ticket format {fmt!r}")
