"""The terminal report: diagnoses best first, then the facts that mattered."""

from __future__ import annotations

from tracelens.models import Diagnosis, Report
from tracelens.render.common import important_facts, summary_line

_FG = {"red": 31, "yellow": 33, "cyan": 36, "white": 37}


def _style(text: str, color: bool, fg: str | None = None, bold: bool = False) -> str:
    """ANSI colour (and bold) for a terminal; the text as is without ``color``."""
    if not color:
        return text
    codes = (f"\033[{_FG[fg]}m" if fg else "") + ("\033[1m" if bold else "")
    return f"{codes}{text}\033[0m"


def render_diagnosis(d: Diagnosis, rank: int, color: bool = False) -> list[str]:
    sev_color = {"fatal": "red", "error": "red", "warning": "yellow"}.get(d.severity, "white")
    tag = "symptom" if d.secondary else "cause"
    out = [
        _style(f"[{rank}] {d.title}", color, bold=True),
        f"    {_style(d.severity.upper(), color, fg=sev_color)}  {d.category}  ({tag}, "
        f"confidence {d.confidence:.2f}, rule {d.rule_id})",
        "",
        "    Root cause: " + d.root_cause,
    ]
    for note in d.notes:
        out.append("    Note: " + note)
    if d.evidence:
        out += ["", "    Evidence:"]
        for e in d.evidence:
            out.append(f"      line {e.line:>6}: {e.text}")
    if d.remedies:
        out += ["", "    Remedies (in order):"]
        for k, r in enumerate(d.remedies, 1):
            mark = " (already in place)" if r.already_applied else ""
            out.append(f"      {k}. {r.title}{mark}")
            for s in r.steps:
                out.append(f"         - {s}")
            for c in r.commands:
                out.append("         $ " + _style(c, color, fg="cyan"))
    if d.does_not_help:
        out += ["", "    Does not help:"]
        for t in d.does_not_help:
            out.append(f"      - {t}")
    if d.references:
        out += ["", "    References:"]
        for ref in d.references:
            out.append(f"      {ref}")
    return out


def render_text(report: Report, color: bool = False) -> str:
    doc = report.document
    lines = [summary_line(report)]
    if not report.diagnoses:
        lines.append("")
        from tracelens.parse.lifecycle import stop_requested_line, teardown_only

        if teardown_only(doc):
            lines.append(
                f"Nothing is wrong: the process was asked to stop at line {stop_requested_line(doc)}; "
                f"the {len(doc.tracebacks)} traceback(s) after it are part of the shutdown."
            )
        elif doc.tracebacks or doc.errors:
            lines.append(
                "No known failure matched. The log has "
                f"{len(doc.tracebacks)} traceback(s) and {len(doc.errors)} error line(s):"
            )
            for tb in doc.tracebacks[:5]:
                exc = tb.exception
                what = f"{exc.type}: {exc.message.splitlines()[0] if exc.message else ''}" if exc else "(truncated)"
                lines.append(f"  line {tb.start_line}: {what}")
            for err in doc.errors[:5]:
                lines.append(f"  line {err.line}: {err.text[:200]}")
        else:
            lines.append("Nothing is wrong: no rule fired and no error was found.")
    for k, d in enumerate(report.diagnoses, 1):
        lines.append("")
        lines += render_diagnosis(d, k, color)
    if report.similar:
        lines += ["", "Similar past incidents:"]
        for h in report.similar:
            fix = f" — fixed by: {h['remedy_worked']}" if h.get("remedy_worked") else ""
            lines.append(f"  {h['score']:5.1f}  #{h['id']} seen {h['count']}x, {h['status']}: {h['title'][:80]}{fix}")
    facts = important_facts(report.facts)
    if facts:
        lines += ["", "Facts:"]
        width = max(len(n) for n, _ in facts)
        for n, v in facts:
            lines.append(f"  {n.ljust(width)}  {v}")
    return "\n".join(lines)
