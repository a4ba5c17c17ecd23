"""Ticket bodies: Markdown, Jira, JSON and a prefilled GitHub new-issue URL.

Built from a report in its JSON form (live, or stored with an incident) and a redacted
excerpt of the log, so the same code serves ``ticket FILE`` and ``ticket ID``.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from tracelens.render.common import fence, important_facts, md_facts_table, md_remedies

GITHUB_URL_LIMIT = 8000
"""Stay under the length GitHub accepts for a new-issue URL."""
TICKET_FORMATS = ("markdown", "jira", "json", "github-url")


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


def markdown(report: dict, excerpt: str, incident: dict | None = None, *, with_excerpt: bool = True) -> str:
    top = _top(report)
    out = [f"## {summary(report, incident)}", ""]
    if incident:
        out += [
            f"Incident #{incident['id']} · seen {incident['count']} time(s), first {incident['first_seen']}, "
            f"last {incident['last_seen']} · status {incident['status']}",
            "",
        ]
    if top:
        out += [f"**Category:** `{top['category']}` · **severity:** {top['severity']} · **rule:** `{top['rule_id']}`", ""]
        out += ["### Root cause", "", top["root_cause"], ""]
        for note in top.get("notes") or []:
            out += [f"> {note}", ""]
        if top.get("remedies"):
            worked = (incident or {}).get("remedy_worked")
            out += ["### Remedies", ""]
            out += md_remedies(top["remedies"], lambda r: " ✅ worked here before" if worked and worked == r["title"] else "")
            out.append("")
        if top.get("does_not_help"):
            out += ["### Does not help", ""] + [f"- {t}" for t in top["does_not_help"]] + [""]
    elif incident:
        out += ["No rule recognises this failure yet.", ""]
    if incident and incident.get("resolution_note"):
        out += ["### Resolution", "", incident["resolution_note"], ""]
    rows = _env_rows(report)
    if rows:
        out += ["### Environment", ""] + md_facts_table(rows) + [""]
    if with_excerpt and excerpt:
        out += ["### Log excerpt", "", fence(excerpt, "text"), ""]
    if top and top.get("references"):
        out += ["### References", ""] + [f"- {u}" for u in top["references"]] + [""]
    out.append("_Diagnosed by tracelens._")
    return "\n".join(out) + "\n"


def jira(report: dict, excerpt: str, incident: dict | None = None) -> str:
    top = _top(report)
    out = [f"h2. {summary(report, incident)}", ""]
    if incident:
        out += [f"Incident #{incident['id']}, seen {incident['count']} time(s), status {incident['status']}", ""]
    if top:
        out += [f"*Category:* {top['category']} | *severity:* {top['severity']} | *rule:* {top['rule_id']}", ""]
        out += ["h3. Root cause", top["root_cause"], ""]
        if top.get("remedies"):
            out.append("h3. Remedies")
            for r in top["remedies"]:
                out.append(f"# {r['title']}")
                if r.get("commands"):
                    out.append("{noformat}\n" + "\n".join(r["commands"]) + "\n{noformat}")
            out.append("")
        if top.get("does_not_help"):
            out += ["h3. Does not help"] + [f"* {t}" for t in top["does_not_help"]] + [""]
    rows = _env_rows(report)
    if rows:
        out += ["h3. Environment", "||fact||value||"] + [f"|{n}|{v}|" for n, v in rows] + [""]
    if excerpt:
        out += ["h3. Log excerpt", "{noformat}\n" + excerpt.replace("{noformat}", "{ noformat}") + "\n{noformat}"]
    return "\n".join(out) + "\n"


def as_json(report: dict, excerpt: str, incident: dict | None = None) -> str:
    top = _top(report)
    data = {
        "summary": summary(report, incident),
        "incident": {k: incident[k] for k in ("id", "fingerprint", "count", "first_seen", "last_seen", "status")} if incident else None,
        "diagnosis": top,
        "environment": dict(_env_rows(report)),
        "excerpt": excerpt,
        "body_markdown": markdown(report, excerpt, incident),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def github_url(repo: str, report: dict, excerpt: str, incident: dict | None = None) -> str:
    """A new-issue URL with title and body filled, trimmed to stay under the length limit:
    first the excerpt is shortened, then dropped, then the body is cut."""
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ValueError(f"--repo must be OWNER/NAME, not {repo!r}")
    base = f"https://github.com/{repo}/issues/new?title={quote(summary(report, incident)[:200])}&body="
    lines = excerpt.splitlines()
    while True:
        body = markdown(report, "\n".join(lines), incident, with_excerpt=bool(lines))
        url = base + quote(body)
        if len(url) <= GITHUB_URL_LIMIT:
            return url
        if lines:
            lines = lines[: len(lines) // 2] if len(lines) > 4 else []
            continue
        note = "\n\n_(cut to fit a URL; run tracelens locally for the full report)_"
        room = GITHUB_URL_LIMIT - len(base) - len(quote(note))
        cut = body
        while len(quote(cut)) > room:
            cut = cut[: int(len(cut) * 0.9)]
        return base + quote(cut + note)


def render_ticket(fmt: str, report: dict, excerpt: str, incident: dict | None = None, repo: str | None = None) -> str:
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
