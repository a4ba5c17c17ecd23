"""``tracelens explain``: a rule in the same headings for every rule."""

from __future__ import annotations

from tracelens.rulebook.load import LoadedRule
from tracelens.rulebook.model import not_help_text
from tracelens.rulebook.placeholders import fill


def render_rule(lr: LoadedRule) -> str:
    """A rule explained without a log: placeholders show their fallback text, or ``<name>``
    where the user fills in a value, never raw braces."""
    r = lr.rule

    def f(text: str) -> str:
        return fill(text, {})

    out = [
        f"{r.id}: {f(r.title)}",
        f"category {r.category} · severity {r.severity} · status {r.status}"
        + (" · secondary symptom" if r.secondary else ""),
        "",
        "What it detects:",
        "  " + " ".join(f(r.root_cause).split()),
        "",
        "What to do:",
    ]
    for k, rem in enumerate(r.remedies, 1):
        out.append(f"  {k}. {f(rem.title)}")
        out += [f"     - {f(s)}" for s in rem.steps]
        out += [f"     $ {f(c)}" for c in rem.commands]
        if rem.fixed_in:
            out.append(f"     (fixed in {rem.fixed_in.package} {rem.fixed_in.version})")
    if r.does_not_help:
        out += ["", "What does not help:"] + [
            f"  - {f(not_help_text(t))}" + ("" if isinstance(t, str) else " (in some logs only)")
            for t in r.does_not_help
        ]
    if r.false_positives:
        out += ["", "Known false positives:"] + [f"  - {t}" for t in r.false_positives]
    out += ["", "References:"] + [f"  {u}" for u in r.references]
    if lr.examples:
        out += ["", "Examples:"] + [f"  {p}" for p in lr.examples]
    return "\n".join(out)
