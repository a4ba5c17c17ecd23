"""Ticket bodies: Markdown, Jira, JSON and a prefilled GitHub new-issue URL.

Built from a :class:`~tracelens.models.Report` (live and redacted, or loaded back from the
store) and its :class:`~tracelens.incidents.records.Excerpt`, so the same code serves
``ticket FILE`` and ``ticket ID``. The excerpt a ticket shows is the originating failure as its
own process printed it, in order: no other process's lines, no start-up banner, no incident
bookkeeping.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from tracelens.incidents.records import Excerpt, ExcerptLine, Incident, is_banner
from tracelens.models import Diagnosis, Report, to_dict
from tracelens.pyregex import compile_re
from tracelens.regex import compile_regex
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
"""The longest new-issue URL made: GitHub answers longer ones (a little over 8 KiB) with
"414 URI Too Long" or drops the body, so a link stays under 8,000 characters."""
_MIN_EXCERPT = 6
"""Lines of log excerpt a link keeps before it drops the excerpt."""
_TITLE_LIMIT = 200
TICKET_FORMATS = ("markdown", "jira", "json", "github-url")
GITHUB_REPO = compile_re(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
"""OWNER/NAME as GitHub allows them: an owner of up to 39 letters, digits and hyphens, a name
of up to 100 letters, digits, ``.``, ``_`` and ``-``; nothing that could add to the URL."""
# RE2 (linear time: a ticket's excerpt may hold lines of any length); no lookarounds there, so
# the boundary character is captured and put back
_SITE = compile_regex(r"""(?:[A-Za-z]:)?[^\s"'(]*[/\\]((?:site|dist)-packages[/\\])""")
"""The install prefix of a package path (``/home/me/.venv/lib/python3.12/``)."""
_HOME = compile_regex(r"""(^|[^\w/])(?:(?:/home|/Users)/[^/\s"']+|/root)/""", multiline=True)
_LOCAL = compile_re(r"^(?:~|/|[A-Za-z]:[/\\]|\.\.?/)")


def _top(report: Report) -> Diagnosis | None:
    return report.diagnoses[0] if report.diagnoses else None


def summary(report: Report, incident: Incident | None = None) -> str:
    top = _top(report)
    if top:
        return top.title
    if incident:
        return incident.title or "Unclassified failure"
    return "Unclassified failure"


# --- the excerpt a ticket shows ------------------------------------------------------------


def failure_lines(excerpt: Excerpt) -> list[ExcerptLine]:
    """The lines of the originating failure, in order, from its own process. An excerpt stored
    before failures were marked: the lines of the process of its first evidence line. Start-up
    banners and progress bars are left out."""
    lines = excerpt.origin_lines()
    if not lines:
        first = next((ln for ln in excerpt.lines if ln.evidence), None)
        process = first.process if first else ""
        lines = [ln for ln in excerpt.lines if ln.process == process]
    return [ln for ln in lines if not is_banner(ln.text)]


def excerpt_text(excerpt: Excerpt, *, public: bool = False) -> str:
    """The failure's lines as its process printed them (a ``...`` line where the middle of a
    very long one was left out); ``public``: the install prefix of package paths and home
    directories shortened (nothing of the user's machine in a public link)."""
    out: list[str] = []
    for ln in failure_lines(excerpt):
        text = ln.text
        out.append(public_paths(text) if public else text)
        if excerpt.origin_gap and ln.line == excerpt.origin_gap:
            out.append("...")
    return "\n".join(out)


def public_paths(text: str) -> str:
    """Paths of the user's machine shortened: a package's install prefix to ``.../`` (what
    is left, ``site-packages/vllm/...``, is what a maintainer reads) and a home directory to
    ``~``."""
    return _HOME.sub(r"\1~/", _SITE.sub(r".../\1", text))


def excerpt_head(excerpt: Excerpt) -> str:
    """Where the excerpt is from: the process and the lines (plain text, escaped by the
    caller)."""
    lines = failure_lines(excerpt)
    if not lines:
        return ""
    span = f"lines {lines[0].line}-{lines[-1].line}"
    return f"process {lines[0].process}, {span}" if lines[0].process else span


def _env_rows(report: Report, public: bool = False) -> list[tuple[str, str]]:
    rows = important_facts(report.facts)
    if public:  # a path on the user's machine means nothing to a maintainer
        rows = [(n, v) for n, v in rows if not _LOCAL.match(str(v))]
    return rows


def _env_and_excerpt(report: Report, text: str, head: str, public: bool = False) -> list[str]:
    out: list[str] = []
    rows = _env_rows(report, public)
    if rows:
        out += ["### Environment", ""] + md_facts_table(rows) + [""]
    if text:
        out += ["### Log excerpt", ""]
        if head:
            out += [md_text(f"From {head}:"), ""]
        out += [fence(text, "text"), ""]
    return out


def markdown(
    report: Report,
    excerpt: Excerpt,
    incident: Incident | None = None,
    *,
    text: str | None = None,
    compact: bool = False,
) -> str:
    """The ticket in Markdown; every text that came from a log is escaped (:func:`md_text`).
    ``text``: the excerpt as shown (default: :func:`excerpt_text`). ``compact`` (for a link
    that must stay short and public): the environment and the excerpt right after the root
    cause; remedy titles only; no does-not-help list; three references; no local paths."""
    top = _top(report)
    shown = excerpt_text(excerpt, public=compact) if text is None else text
    head = excerpt_head(excerpt)
    out = [f"## {md_line(summary(report, incident))}", ""]
    if top:
        out += [
            f"**Category:** {md_code(top.category)} · **severity:** {md_line(top.severity)} · **rule:** {md_code(top.rule_id)}",
            "",
        ]
        out += ["### Root cause", "", md_text(top.root_cause), ""]
        if compact:  # what a maintainer needs first, before the link's length runs out
            out += _env_and_excerpt(report, shown, head, public=True)
        for note in [] if compact else top.notes:
            out += [f"> {md_line(note)}", ""]
        if top.remedies and compact:
            out += ["### Remedies", ""]
            out += [f"{k}. {md_line(r.title)}" for k, r in enumerate(top.remedies[:3], 1)]
            out.append("")
        elif top.remedies:
            worked = incident.remedy_worked if incident else None
            out += ["### Remedies", ""]
            out += md_remedies(
                [to_dict(r) for r in top.remedies],
                lambda r: " ✅ worked here before" if worked and worked == r["title"] else "",
            )
            out.append("")
        if top.does_not_help and not compact:
            out += ["### Does not help", ""] + [f"- {md_line(t)}" for t in top.does_not_help] + [""]
    elif incident:
        out += ["No rule recognises this failure yet.", ""]
    if incident and incident.resolution_note:
        out += ["### Resolution", "", md_text(incident.resolution_note), ""]
    if not (compact and top):
        out += _env_and_excerpt(report, shown, head, public=compact)
    if top and top.references:
        refs = top.references[:3] if compact else top.references
        out += ["### References", ""] + [f"- {md_link(u)}" for u in refs] + [""]
    out.append("_Diagnosed by tracelens._")
    return "\n".join(out) + "\n"


def jira(report: Report, excerpt: Excerpt, incident: Incident | None = None) -> str:
    """The ticket in Jira wiki markup; text from a log is escaped (:func:`jira_text`) and
    blocks cannot be closed from inside (:func:`jira_block`)."""
    top = _top(report)
    out = [f"h2. {jira_text(summary(report, incident))}", ""]
    if top:
        out += [
            f"*Category:* {jira_text(top.category)} | *severity:* {jira_text(top.severity)} | *rule:* {jira_text(top.rule_id)}",
            "",
        ]
        out += ["h3. Root cause", jira_text(top.root_cause), ""]
        if top.remedies:
            out.append("h3. Remedies")
            for r in top.remedies:
                out.append(f"# {jira_text(r.title)}")
                for step in r.steps:
                    out.append(f"## {jira_text(step)}")
                if r.commands:
                    out.append(jira_block("\n".join(r.commands)))
            out.append("")
        if top.does_not_help:
            out += ["h3. Does not help"] + [f"* {jira_text(t)}" for t in top.does_not_help] + [""]
    rows = _env_rows(report)
    if rows:
        out += (
            ["h3. Environment", "||fact||value||"]
            + [f"|{jira_text(n)}|{jira_text(v) or ' '}|" for n, v in rows]
            + [""]
        )
    text = excerpt_text(excerpt)
    if text:
        head = excerpt_head(excerpt)
        out += ["h3. Log excerpt"] + ([jira_text(f"From {head}:")] if head else [])
        out.append(jira_block(text))
    return "\n".join(out) + "\n"


def as_json(report: Report, excerpt: Excerpt, incident: Incident | None = None) -> str:
    top = _top(report)
    data = {
        "summary": summary(report, incident),
        "incident": {
            k: getattr(incident, k)
            for k in ("id", "fingerprint", "count", "first_seen", "last_seen", "status")
        }
        if incident
        else None,
        "diagnosis": to_dict(top) if top else None,
        "environment": dict(_env_rows(report)),
        "excerpt": excerpt_text(excerpt),
        "excerpt_lines": [to_dict(ln) for ln in failure_lines(excerpt)],
        "body_markdown": markdown(report, excerpt, incident),
    }
    return json.dumps(data, indent=2, ensure_ascii=False)


def _title(text: str, limit: int = _TITLE_LIMIT) -> str:
    """A title cut at a word boundary, never inside a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else ""
    return (cut or text[: limit - 1]) + "…"


def _shorter(lines: list[str]) -> list[str]:
    """About half the lines, at line boundaries: the first two (where the failure starts) and
    the end (the innermost frames and the exception), a ``...`` line between."""
    keep = max(_MIN_EXCERPT, len(lines) // 2)
    if len(lines) <= keep:
        return lines
    tail = keep - 3
    return [*lines[:2], "...", *lines[-tail:]]


def github_url(
    repo: str, report: Report, excerpt: Excerpt, incident: Incident | None = None
) -> str:
    """A new-issue URL with title and body filled, at most :data:`GITHUB_URL_LIMIT`
    characters: first the excerpt is shortened at line boundaries, then dropped, then the body
    is cut after a whole line. The environment stays; nothing points at the user's machine."""
    if not GITHUB_REPO.fullmatch(repo):
        raise ValueError(
            f"--repo must be OWNER/NAME (letters, digits, '-', and '.' or '_' in the name), not {repo[:80]!r}"
        )
    title = _title(public_paths(summary(report, incident)))
    base = f"https://github.com/{repo}/issues/new?title={quote(title)}&body="
    lines = excerpt_text(excerpt, public=True).splitlines()
    while True:
        body = public_paths(
            markdown(report, excerpt, incident, text="\n".join(lines), compact=True)
        )
        url = base + quote(body)
        if len(url) <= GITHUB_URL_LIMIT:
            return url
        if len(lines) > _MIN_EXCERPT:
            lines = _shorter(lines)
            continue
        if lines:
            lines = []
            continue
        break
    note = "_(shortened to fit a link: the full diagnosis and log excerpt are in the log itself)_"
    room = GITHUB_URL_LIMIT - len(base) - len(quote("\n" + note + "\n"))
    kept: list[str] = []
    used, newline = 0, len(quote("\n"))  # quote() encodes each character on its own
    for line in body.splitlines():  # whole lines only: never a word cut in half
        used += len(quote(line)) + (newline if kept else 0)
        if used > room:
            break
        kept.append(line)
    return base + quote("\n".join([*kept, note]) + "\n")


def render_ticket(
    fmt: str,
    report: Report,
    excerpt: Excerpt,
    incident: Incident | None = None,
    repo: str | None = None,
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
