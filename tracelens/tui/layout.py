"""Column widths that follow the terminal: fixed columns keep their width, the text column (a
title, a rule id) takes the rest, so nothing is cut at 80 columns that fits, and a wide terminal
shows whole titles.

>>> incident_columns(80, 29)
{'last_seen': 11, 'count': 4, 'status': 1, 'category': 16, 'title': 36}
>>> incident_columns(200, 29)["title"]
136
>>> rule_columns(40, 53, 29)
{'rule': 36, 'category': 0}
>>> rule_columns(92, 53, 29)
{'rule': 53, 'category': 29}
>>> rule_columns(60, 53, 29)
{'rule': 32, 'category': 22}
>>> fit("attention-backend-unsupported", 16)
'attention-backe…'
"""

from __future__ import annotations

PADDING = 2
"""A DataTable cell's padding (one space either side)."""
SCROLLBAR = 2
"""The vertical scrollbar beside a table longer than the screen."""
NARROW = 100
"""Below this many columns, the incident list shows the status as one character and cuts long
categories."""
NARROW_CATEGORY = 16
RULE_MIN = 30
"""The rules browser shows the category column only where the rule id keeps this many."""
CATEGORY_MAX = 30
CATEGORY_CUT = 22
"""A rules browser too narrow for whole ids and categories cuts categories to this (nine in
ten are shorter)."""


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def incident_columns(width: int, category: int) -> dict[str, int]:
    """Widths of the incident list's columns for a terminal ``width`` wide, whose longest
    category is ``category`` characters."""
    narrow = width < NARROW
    out = {
        "last_seen": 11,
        "count": 4,
        "status": 1 if narrow else 8,
        "category": min(category, NARROW_CATEGORY if narrow else CATEGORY_MAX),
    }
    rest = width - SCROLLBAR - PADDING * (len(out) + 1) - sum(out.values())
    out["title"] = max(rest, 20)
    return out


def rule_columns(width: int, rule_id: int, category: int) -> dict[str, int]:
    """Widths of the rules browser's list (rule id, category) in a pane ``width`` wide, whose
    longest rule id and category are ``rule_id`` and ``category`` long; the category is left
    out (the rule pane shows it) where the id would keep fewer than ``RULE_MIN``."""
    usable = width - SCROLLBAR - PADDING * 2
    cat = min(category, max(CATEGORY_CUT, usable - rule_id), CATEGORY_MAX)
    if usable - cat >= min(rule_id, RULE_MIN):
        return {"rule": min(usable - cat, rule_id), "category": cat}
    return {"rule": width - SCROLLBAR - PADDING, "category": 0}
