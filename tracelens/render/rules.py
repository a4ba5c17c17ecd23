"""``tracelens explain``: a rule in the same headings for every rule."""

from __future__ import annotations

from tracelens.rulebook.load import LoadedRule


def render_rule(lr: LoadedRule) -> str:
    r = lr.rule
    out = [
        f"{r.id}: {r.title}",
        f"category {r.category} · severity {r.severity} · status {r.status}"
        + (" · secondary symptom" if r.secondary else ""),
        "",
        "What it detects:",
        "  " + " ".join(r.root_cause.split()),
        "",
        "What to do:",
    ]
    for k, rem in enumerate(r.remedies, 1):
        out.append(f"  {k}. {rem.title}")
        out += [f"     - {s}" for s in rem.steps]
        out += [f"     $ {c}" for c in rem.commands]
        if rem.fixed_in:
            out.append(f"     (fixed in {rem.fixed_in.package} {rem.fixed_in.version})")
    if r.does_not_help:
        out += ["", "What does not help:"] + [f"  - {t}" for t in r.does_not_help]
    if r.false_positives:
        out += ["", "Known false positives:"] + [f"  - {t}" for t in r.false_positives]
    out += ["", "References:"] + [f"  {u}" for u in r.references]
    if lr.examples:
        out += ["", "Examples:"] + [f"  {p}" for p in lr.examples]
    return "\n".join(out)
