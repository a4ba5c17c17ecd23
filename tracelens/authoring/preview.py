"""``tracelens rules preview``: what new or changed rules would do to the incidents already
stored, before they ship: which failures they would now catch, take from another rule, or lose.

Each incident is diagnosed again from its stored excerpt (the log lines around the evidence,
redacted) with the shipped rules alone and with the rules under review added; only incidents
whose first diagnosis changes are listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracelens.pyregex import compile_re
from tracelens.rulebook.load import RuleSet

_EXCERPT_LINE = compile_re(r"^\d+: ?(.*)$")
UNRECOGNIZED = "unrecognized"


@dataclass(frozen=True)
class Change:
    incident_id: int
    title: str
    before: str
    """First diagnosis with the shipped rules (``-`` for none)."""
    after: str
    """First diagnosis with the rules under review."""
    kind: str
    """``catch`` (nothing or an unrecognized failure before), ``take`` (another rule before),
    ``lose`` (a reviewed rule before, another after) or ``change`` (two other rules)."""


def excerpt_text(excerpt: str) -> str:
    """The log lines of a stored excerpt, without their numbers and the gap markers."""
    out = []
    for line in excerpt.splitlines():
        m = _EXCERPT_LINE.match(line)
        if m:
            out.append(m.group(1))
    return "\n".join(out) + "\n"


def _top(text: str, rules: RuleSet) -> str:
    from tracelens.engine import diagnose

    diags = diagnose(text, rules).diagnoses
    return diags[0].rule_id if diags else "-"


def preview(
    store, shipped: RuleSet, reviewed: RuleSet, ids: set[str], limit: int = 10000
) -> list[Change]:
    """The stored incidents whose first diagnosis the reviewed rules (``ids``) change."""
    out: list[Change] = []
    for inc in store.incidents(limit=limit):
        excerpt = store.latest_occurrence(inc.id).excerpt
        if not excerpt:
            continue
        text = excerpt_text(excerpt.numbered())
        before, after = _top(text, shipped), _top(text, reviewed)
        if before == after:
            continue
        if after in ids:
            kind = "catch" if before in ("-", UNRECOGNIZED) else "take"
        elif before in ids:
            kind = "lose"
        else:
            kind = "change"
        out.append(Change(inc.id, inc.title, before, after, kind))
    return out
