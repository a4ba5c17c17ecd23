"""Similar-incident candidates (``tracelens.incidents.search``) are the ones the plain
definition gives: each word's count over the latest incidents, read exactly and one row per
incident, the rare words OR'ed (the incidents sharing the most of them first, then in the order
first met, newest first), else the three rarest AND'ed. The search reads less (counts stop past
the rare limit, each word's incidents come as one text) and must pick the same incidents in the
same order, on either side of the rare limit and of the window."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tracelens.incidents import queries, search
from tracelens.incidents.store import Store

WINDOW = 400
"""The window the tests measure words over (the store holds 1,000 incidents)."""

# word -> how many of 1,000 incidents hold it (rare under the limit of 50 in the window of 400,
# or common above it), placed at random
SPREAD = {"w1": 3, "w2": 20, "w3": 60, "w4": 140, "w5": 200, "w6": 400, "w7": 700, "w8": 900}


RULES = ("r/a", None, "r/b", "unrecognized", "r/a", "-", "")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    rnd = random.Random(12)
    sigs: list[list[str]] = [["base"] for _ in range(1000)]
    for word, n in SPREAD.items():
        for k in rnd.sample(range(1000), n):
            sigs[k].append(word)
    s = Store(tmp_path_factory.mktemp("search") / "incidents.db")
    conn = s.db.conn
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO incidents (fingerprint, signature, rule_id, first_seen, last_seen) "
        "VALUES (?, ?, ?, 'x', 'x')",
        [(str(k), " ".join(sig), RULES[k % len(RULES)]) for k, sig in enumerate(sigs)],
    )
    conn.execute("COMMIT")
    return s


def plain_ids(db, words: list[str], limit: int) -> list[int]:
    """The candidates as first defined: exact counts, one row per incident."""
    if not words:
        return []
    top = db.execute("SELECT max(rowid) FROM incidents").fetchone()[0]
    after = max(0, top - WINDOW)
    df = {w: db.execute(*queries.recent_matches(w, after)).fetchone()[0] for w in words}
    present = sorted((w for w in words if df[w]), key=lambda w: df[w])
    rare = [w for w in present if df[w] <= max(50, (top - after) // 50)]
    if not rare:
        if not present:
            return []
        return [r[0] for r in db.execute(*queries.matching_ids(present[:3], "AND", limit))]
    hits = Counter(r[0] for w in rare for r in db.execute(*queries.matching_ids([w], "OR")))
    return sorted(hits, key=hits.__getitem__, reverse=True)[:limit]


WORDS = [
    [],
    ["nowhere"],
    ["w1"],
    ["w3", "w1", "w2"],  # rare ones, in any order
    ["w8", "w2", "w7", "w4"],  # rare and common
    ["w4", "w5", "w3"],  # around the limit of 50 in the window
    ["w6", "w7", "w8", "base"],  # none rare: the three rarest, AND'ed
    ["base", "w8", "w7", "w6", "w5"],  # the three rarest are not the first three
    ["w8", "w7", "nowhere", "w6"],
    ["base"],
    list(SPREAD),
]


@pytest.mark.parametrize("words", WORDS, ids=[",".join(w) or "none" for w in WORDS])
@pytest.mark.parametrize("limit", [1000, 120, 7])
def test_candidates_are_those_of_the_plain_definition(store, monkeypatch, words, limit):
    monkeypatch.setattr(search, "WINDOW", WINDOW)
    assert search.candidate_ids(store.db, words, limit) == plain_ids(store.db, words, limit)


@pytest.mark.parametrize(
    "word, most, expected",
    [("w1", None, 3), ("w8", None, 900), ("w8", 51, 51), ("w2", 51, 20), ("nowhere", 5, 0)],
)
def test_a_word_is_counted_up_to_the_limit_asked(store, word, most, expected):
    assert store.db.execute(*queries.recent_matches(word, 0, most)).fetchone()[0] == expected


@pytest.mark.parametrize("word, expected", [("w1", 3), ("w7", 700), ("nowhere", 0)])
def test_a_words_incidents_come_as_one_text(store, word, expected):
    text = store.db.execute(*queries.matching_id_list(word)).fetchone()[0]
    ids = sorted(int(i) for i in text.split(",")) if text else []
    assert ids == [r[0] for r in store.db.execute(*queries.matching_ids([word], "OR"))][::-1]
    assert len(ids) == expected


@pytest.mark.parametrize("words", WORDS[3:6], ids=[",".join(w) for w in WORDS[3:6]])
@pytest.mark.parametrize(
    "rules", [["r/a", "", "-", "unrecognized"], ["r/b"], ["r/c", ""]], ids=["a", "b", "c"]
)
def test_candidates_of_some_rules_are_those_of_all_rules_kept(store, monkeypatch, words, rules):
    monkeypatch.setattr(search, "WINDOW", WINDOW)
    every = search.candidate_rows(store.db, words, None)
    kept = [row for row in every if row[3] is None or row[3] in rules]
    assert search.candidate_rows(store.db, words, None, rules=rules) == kept
    assert len(every) > len(kept) > 0
