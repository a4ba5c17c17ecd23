"""Markdown, ready to paste into an issue or chat."""

from __future__ import annotations

from tracelens.models import Report, to_dict
from tracelens.render.common import (
    EMPTY_LOG,
    empty_log,
    fence,
    important_facts,
    md_code,
    md_facts_table,
    md_line,
    md_link,
    md_remedies,
    md_text,
    summary_counts,
)


def render_markdown(report: Report) -> str:
    out = [f"## tracelens: {md_line(report.source)}", "", md_text(summary_counts(report)), ""]
    if empty_log(report):
        out.append(f"**{EMPTY_LOG}**")
    elif not report.diagnoses:
        out.append("**No known failure matched.**")
    for k, d in enumerate(report.diagnoses, 1):
        kind = "symptom" if d.secondary else "root cause"
        out += [
            f"### {k}. {md_line(d.title)}",
            "",
            f"{md_code(d.category)} · {d.severity} · {kind} · confidence {d.confidence:.2f} · rule {md_code(d.rule_id)}",
            "",
            f"**Root cause.** {md_text(d.root_cause)}",
            "",
        ]
        for note in d.notes:
            out += [f"> {md_line(note)}", ""]
        if d.evidence:
            out += [
                "**Evidence**",
                "",
                fence("\n".join(f"{e.line}: {e.text}" for e in d.evidence)),
                "",
            ]
        if d.remedies:
            out += ["**Remedies, in order**", ""]
            out += md_remedies(
                [to_dict(r) for r in d.remedies],
                lambda r: " *(already in place)*" if r["already_applied"] else "",
            )
            out.append("")
        if d.does_not_help:
            out += ["**Does not help**", ""] + [f"- {md_line(t)}" for t in d.does_not_help] + [""]
        if d.references:
            out += ["**References**", ""] + [f"- {md_link(r)}" for r in d.references] + [""]
    facts = important_facts(report.facts)
    if facts:
        out += ["### Environment", ""] + md_facts_table(facts)
    return "\n".join(out).rstrip() + "\n"
