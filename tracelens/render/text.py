"""The terminal report: diagnoses best first, then the facts that mattered."""

from __future__ import annotations

import textwrap

from tracelens.models import Diagnosis, Report
from tracelens.render.common import (  # noqa: F401  (clean: part of this module's interface)
    EMPTY_LOG,
    clean,
    empty_log,
    important_facts,
    summary_line,
)

_FG = {"red": 31, "yellow": 33, "cyan": 36, "white": 37}


def _style(text: str, color: bool, fg: str | None = None, bold: bool = False) -> str:
    """ANSI colour (and bold) for a terminal; the text as is without ``color``."""
    if not color:
        return text
    codes = (f"\033[{_FG[fg]}m" if fg else "") + ("\033[1m" if bold else "")
    return f"{codes}{text}\033[0m"


COMPACT_REMEDIES = 3
COMPACT_EVIDENCE = 6
COMPACT_REFERENCES = 3


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    text = clean(text).strip()
    if width <= 0:
        return [first + text]
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first]


def render_diagnosis(
    d: Diagnosis, rank: int, color: bool = False, *, full: bool = True, width: int = 0
) -> list[str]:
    sev_color = {"fatal": "red", "error": "red", "warning": "yellow"}.get(d.severity, "white")
    tag = "symptom" if d.secondary else "cause"
    out = [
        _style(line, color, bold=True) for line in _wrap(f"[{rank}] {d.title}", width, "", "    ")
    ]
    head = _wrap(
        f"{d.severity.upper()}  {d.category}  ({tag}, confidence {d.confidence:.2f}, rule {d.rule_id})",
        width,
        "    ",
        "    ",
    )
    head[0] = head[0].replace(
        d.severity.upper(), _style(d.severity.upper(), color, fg=sev_color), 1
    )
    out += [*head, ""]
    out += _wrap("Root cause: " + d.root_cause, width, "    ", "    ")
    for note in d.notes:
        out += _wrap("Note: " + note, width, "    ", "          ")
    evidence = d.evidence if full else d.evidence[:COMPACT_EVIDENCE]
    if evidence:
        out += ["", "    Evidence:"]
        for e in evidence:
            out.append(clean(f"      line {e.line:>6}: {e.text}"))
        if len(d.evidence) > len(evidence):
            out.append(f"      … {len(d.evidence) - len(evidence)} more (--full)")
    remedies = d.remedies if full else d.remedies[:COMPACT_REMEDIES]
    if remedies:
        out += ["", "    Remedies (in order):"]
        for k, r in enumerate(remedies, 1):
            mark = " (already in place)" if r.already_applied else ""
            out += _wrap(f"{k}. {r.title}{mark}", width, "      ", "         ")
            for step in r.steps:
                out += _wrap(f"- {step}", width, "         ", "           ")
            for c in r.commands:  # one line each: commands are for pasting
                out.append("         $ " + _style(clean(c), color, fg="cyan"))
        if len(d.remedies) > len(remedies):
            out.append(
                f"      … {len(d.remedies) - len(remedies)} more remed{'y' if len(d.remedies) - len(remedies) == 1 else 'ies'} (--full)"
            )
    if d.does_not_help:
        out += ["", "    Does not help:"]
        for t in d.does_not_help:
            out += _wrap(f"- {t}", width, "      ", "        ")
    references = d.references if full else d.references[:COMPACT_REFERENCES]
    if references:
        out += ["", "    References:"]
        for ref in references:
            out.append(f"      {clean(ref)}")
    return out


def _brief(d: Diagnosis, rank: int, color: bool, width: int) -> list[str]:
    """A later diagnosis in the compact report: title, severity, first evidence line."""
    tag = "symptom" if d.secondary else "cause"
    first = f", line {d.evidence[0].line}" if d.evidence else ""
    out = [
        _style(line, color, bold=True) for line in _wrap(f"[{rank}] {d.title}", width, "", "    ")
    ]
    return out + _wrap(
        f"{d.severity.upper()}  {d.category}  ({tag}, confidence {d.confidence:.2f}, rule {d.rule_id}{first})",
        width,
        "    ",
        "    ",
    )


def _cut(title: str, width: int = 80) -> str:
    """A past incident's title in at most ``width`` characters, cut with an ellipsis."""
    return title if len(title) <= width else title[: width - 1].rstrip() + "…"


def render_text(report: Report, color: bool = False, *, full: bool = False, width: int = 0) -> str:
    """The report for a terminal. Compact by default: the first diagnosis with its evidence,
    top remedies and three references, the others one line each; ``full`` shows everything.
    Prose wraps at ``width`` (0: no wrapping); commands never wrap."""
    doc = report.document
    lines = [summary_line(report)]
    if not report.diagnoses:
        lines.append("")
        from tracelens.parse.lifecycle import stop_requested_line, teardown_only

        if empty_log(report):
            lines.append(EMPTY_LOG)
        elif teardown_only(doc):
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
                what = (
                    f"{exc.type}: {exc.message.splitlines()[0] if exc.message else ''}"
                    if exc
                    else "(truncated)"
                )
                lines.append(clean(f"  line {tb.start_line}: {what}"))
            for err in doc.errors[:5]:
                lines.append(clean(f"  line {err.line}: {err.text[:200]}"))
        else:
            lines.append("Nothing is wrong: no rule fired and no error was found.")
    for k, d in enumerate(report.diagnoses, 1):
        lines.append("")
        if full or k == 1:
            lines += render_diagnosis(d, k, color, full=full, width=width)
        else:
            lines += _brief(d, k, color, width)
    if not full and len(report.diagnoses) > 1:
        lines += [
            "",
            *_wrap(
                "(compact report: --full shows every diagnosis with all its evidence, remedies and references)",
                width,
                "",
                "",
            ),
        ]
    if report.similar:
        best = next((h for h in report.similar if h.resolved), None)
        if best is not None:  # the best past fix: the first resolved incident of the ranking
            said = best.fix or "resolved, nothing noted"
            lines += ["", clean(f'fixed before: #{best.id} "{_cut(best.title)}" — {said}')]
        lines += ["", "Similar past incidents:"]
        for h in report.similar:
            fixed = h.fix or h.remedy_worked
            fix = f" — fixed by: {fixed}" if fixed else ""
            lines.append(
                clean(
                    f"  {h.score:5.1f}  #{h.id} seen {h.count}x, {h.status}: {_cut(h.title)}{fix}"
                )
            )
    facts = important_facts(report.facts)
    if facts:
        lines += ["", "Facts:"]
        pad = max(len(n) for n, _ in facts)
        for n, v in facts:
            lines += _wrap(f"{n.ljust(pad)}  {v}", width, "  ", "  " + " " * (pad + 2))
    return "\n".join(lines)
