"""Jira wiki markup."""

from __future__ import annotations

from tracelens.models import Report
from tracelens.render.common import (
    EMPTY_LOG,
    empty_log,
    important_facts,
    jira_block,
    jira_link,
    jira_text,
    summary_counts,
)

_code = jira_block


def render_jira(report: Report) -> str:
    out = [f"h2. tracelens: {jira_text(report.source)}", "", jira_text(summary_counts(report)), ""]
    if empty_log(report):
        out.append(f"*{EMPTY_LOG}*")
    elif not report.diagnoses:
        out.append("*No known failure matched.*")
    for k, d in enumerate(report.diagnoses, 1):
        out += [
            f"h3. {k}. {jira_text(d.title)}",
            f"{{{{{jira_text(d.category)}}}}} | {d.severity} | confidence {d.confidence:.2f} | rule {{{{{jira_text(d.rule_id)}}}}}",
            "",
            f"*Root cause:* {jira_text(d.root_cause)}",
            "",
        ]
        out += [f"bq. {jira_text(n)}" for n in d.notes]
        if d.evidence:
            out += ["*Evidence*", _code("\n".join(f"{e.line}: {e.text}" for e in d.evidence)), ""]
        if d.remedies:
            out.append("*Remedies, in order*")
            for r in d.remedies:
                out.append(
                    f"# {jira_text(r.title)}{' (already in place)' if r.already_applied else ''}"
                )
                for s in r.steps:
                    out.append(f"** {jira_text(s)}")
                if r.commands:
                    out.append(_code("\n".join(r.commands)))
            out.append("")
        if d.does_not_help:
            out += ["*Does not help*"] + [f"* {jira_text(t)}" for t in d.does_not_help] + [""]
        if d.references:
            out += ["*References*"] + [f"* {jira_link(r)}" for r in d.references] + [""]
    facts = important_facts(report.facts)
    if facts:
        out += ["h3. Environment", "||fact||value||"] + [
            f"|{jira_text(n)}|{{{{{jira_text(v)}}}}}|" for n, v in facts
        ]
    return "\n".join(out).rstrip() + "\n"
