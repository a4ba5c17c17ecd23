"""Which stored incidents may resemble a failure: the candidates similar-incident search
scores, read from the full-text index of signatures and the rule index in a few queries, each
served by an index (``tests/test_store_index.py``).

The functions take the store's connection (anything with ``execute``), so a search needs
neither sqlite-utils nor the store's records.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tracelens.incidents import queries

WINDOW = 50_000
"""How common a word is is measured over this many of the latest incidents."""


def _recent(db: Any, word: str, after: int, most: int | None = None) -> int:
    return db.execute(*queries.recent_matches(word, after, most)).fetchone()[0]


def selective(db: Any, words: list[str]) -> tuple[list[str], str]:
    """The words that narrow a search and how to join them: those in at most 2% of
    signatures, OR'ed, rarest first; when none is that rare, the three rarest, AND'ed (only
    incidents sharing all of them). How common a word is is counted over the latest
    :data:`WINDOW` incidents, so the cost stays the same in a store of millions."""
    if not words:
        return [], "OR"
    top = db.execute(*queries.highest_id()).fetchone()[0] or 0
    after = max(0, top - WINDOW)
    most = max(50, (top - after) // 50)
    # counted up to one past ``most``: a commoner word is not rare, whatever its count
    df = {w: _recent(db, w, after, most + 1) for w in words}
    present = sorted((w for w in words if df[w]), key=lambda w: df[w])
    rare = [w for w in present if df[w] <= most]
    if rare:
        return rare, "OR"
    # every word found is common: the three rarest by their whole counts
    df = {w: _recent(db, w, after) for w in present}
    return sorted(present, key=lambda w: df[w])[:3], "AND"


def candidate_ids(db: Any, words: list[str], limit: int = 1000) -> list[int]:
    """The ``limit`` incidents whose signature shares the most of the words' rare ones (the
    rarest word's incidents first, newest first)."""
    words, join = selective(db, words)
    if words and join == "AND":
        return [r[0] for r in db.execute(*queries.matching_ids(words, join, limit))]
    # each word's incidents newest first (read as one text: a row per incident costs more
    # than the search); the most words shared first, then in the order first met
    hits: Counter[int] = Counter()
    for w in words:
        found = db.execute(*queries.matching_id_list(w)).fetchone()[0]
        if found:
            hits.update(sorted(map(int, found.split(",")), reverse=True))
    return sorted(hits, key=hits.__getitem__, reverse=True)[:limit]


def candidate_rows(
    db: Any,
    words: list[str],
    rule_id: str | None,
    limit: int = 1000,
    rules: list[str] | None = None,
) -> list[tuple]:
    """The candidate columns (:data:`~tracelens.incidents.queries.CANDIDATE`) of the
    incidents most likely to resemble a failure: those of :func:`candidate_ids` (with
    ``rules``, only those of one of these rules or of none), then the latest ones of the same
    rule."""
    ids = candidate_ids(db, words, limit)
    found = {r[0]: r for r in db.execute(*queries.candidates_by_id(ids, rules))} if ids else {}
    rows = {i: found[i] for i in ids if i in found}
    if rule_id:
        for row in db.execute(*queries.candidates_by_rule(rule_id, limit // 5)):
            rows.setdefault(row[0], row)
    return list(rows.values())
