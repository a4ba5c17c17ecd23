"""Generated files: the JSON schema of a rule and the rule catalogue (docs/rules.md).

Both come from the code and the rules; a test fails when the committed copies are stale.
Refresh them with ``tracelens rules schema > rules/rule.schema.json`` and
``tracelens rules catalogue > docs/rules.md``.
"""

from __future__ import annotations

import json
from collections import defaultdict

from tracelens.models import adapter
from tracelens.rulebook.load import RuleSet
from tracelens.rulebook.model import Rule
from tracelens.rulebook.placeholders import fill


def schema_json() -> str:
    schema = adapter(Rule).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "tracelens rule"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def catalogue_md(rs: RuleSet) -> str:
    by_cat: dict[str, list] = defaultdict(list)
    for lr in rs.rules:
        by_cat[lr.rule.category].append(lr.rule)
    out = [
        "# Rule catalogue",
        "",
        "Generated from `rules/` by `tracelens rules catalogue`; do not edit by hand.",
        "",
        f"{len(rs.rules)} rules in {len(by_cat)} categories.",
        "",
    ]
    for cat in sorted(by_cat):
        out += [f"## {cat}", "", "| rule | severity | title |", "|---|---|---|"]
        for r in sorted(by_cat[cat], key=lambda r: r.id):
            sev = r.severity + (" (symptom)" if r.secondary else "")
            title = fill(r.title, {}).replace("|", "\\|")
            out.append(f"| `{r.id}` | {sev} | {title} |")
        out.append("")
    return "\n".join(out)
