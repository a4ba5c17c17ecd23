"""The SQL the incident store reads with, one builder per query, and the indexes that serve them.

Every query that the incident list, the TUI, similar-incident search and ``diagnose`` run
against a store is built here and answered from an index: a filter on status, category or rule
walks a ``(column, last_seen)`` index in the order the list is shown, so a page of 50 reads 50
rows whatever the store's size; ``--since`` is a range of the ``last_seen`` index; ``--search``
starts from the full-text index; counts with no date or text filter and the category list come
from ``incident_counts``, a small table that triggers keep current on every insert, update and
delete. ``tests/test_store_index.py`` runs ``EXPLAIN QUERY PLAN`` over each builder.

A builder returns ``(sql, params)``.
"""

from __future__ import annotations

import sqlite3

from tracelens.incidents.rows import CANDIDATE_COLUMNS, LISTED

SQL = tuple[str, list]

LISTING = ", ".join(f"incidents.{c}" for c in LISTED)
"""The columns an incident list shows (an :class:`~tracelens.incidents.records.IncidentRow`)."""
CANDIDATE = ", ".join(f"incidents.{c}" for c in CANDIDATE_COLUMNS)
"""What similar-incident search ranks (a :class:`~tracelens.incidents.rows.Candidate`)."""

# --- schema ---------------------------------------------------------------------------------------

INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_incidents_status_last_seen ON incidents (status, last_seen)",
    "CREATE INDEX IF NOT EXISTS idx_incidents_category_last_seen ON incidents (category, last_seen)",
    "CREATE INDEX IF NOT EXISTS idx_incidents_rule_id_last_seen ON incidents (rule_id, last_seen)",
    "CREATE INDEX IF NOT EXISTS idx_occurrences_incident_id_seen_at ON occurrences (incident_id, seen_at)",
    "DROP INDEX IF EXISTS idx_occurrences_incident_id",  # the one above starts with it
    "CREATE INDEX IF NOT EXISTS idx_tickets_incident_id ON tickets (incident_id)",
)

# A missing rule or category counts under '' (NULLs would never meet in a primary key).
_KEY = "ifnull({0}.category, ''), ifnull({0}.rule_id, ''), ifnull({0}.status, '')"
_WHERE_KEY = (
    "category = ifnull({0}.category, '') AND rule_id = ifnull({0}.rule_id, '') "
    "AND status = ifnull({0}.status, '')"
)
_ADD = (
    f"INSERT INTO incident_counts (category, rule_id, status, n) VALUES ({_KEY.format('new')}, 1) "
    "ON CONFLICT (category, rule_id, status) DO UPDATE SET n = n + 1;"
)
_REMOVE = (
    f"UPDATE incident_counts SET n = n - 1 WHERE {_WHERE_KEY.format('old')}; "
    f"DELETE FROM incident_counts WHERE n <= 0 AND {_WHERE_KEY.format('old')};"
)
COUNTS = (
    "CREATE TABLE IF NOT EXISTS incident_counts (category TEXT NOT NULL, rule_id TEXT NOT NULL, "
    "status TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (category, rule_id, status)) "
    "WITHOUT ROWID",
    f"CREATE TRIGGER IF NOT EXISTS incident_counts_ai AFTER INSERT ON incidents BEGIN {_ADD} END",
    f"CREATE TRIGGER IF NOT EXISTS incident_counts_ad AFTER DELETE ON incidents BEGIN {_REMOVE} END",
    "CREATE TRIGGER IF NOT EXISTS incident_counts_au AFTER UPDATE OF category, rule_id, status "
    "ON incidents WHEN old.category IS NOT new.category OR old.rule_id IS NOT new.rule_id "
    f"OR old.status IS NOT new.status BEGIN {_REMOVE} {_ADD} END",
)


def add_indexes(conn: sqlite3.Connection) -> None:
    """Schema 6: the indexes above and ``incident_counts``, filled from the incidents already
    stored. Safe to run again: it rebuilds the counts and leaves everything else as it is."""
    for sql in INDEXES + COUNTS:
        conn.execute(sql)
    conn.execute("DELETE FROM incident_counts")
    conn.execute(
        "INSERT INTO incident_counts (category, rule_id, status, n) "
        "SELECT ifnull(category, ''), ifnull(rule_id, ''), ifnull(status, ''), count(*) "
        "FROM incidents GROUP BY 1, 2, 3"
    )


# --- incident lists and counts -------------------------------------------------------------------


def _filters(
    status: str | None = None,
    category: str | None = None,
    rule_id: str | None = None,
    since: str | None = None,
) -> tuple[list[str], list]:
    where: list[str] = []
    params: list = []
    for column, value in (("status", status), ("category", category), ("rule_id", rule_id)):
        if value:
            where.append(f"incidents.{column} = ?")
            params.append(value)
    if since:
        where.append("incidents.last_seen >= ?")
        params.append(since)
    return where, params


def _from(search: str | None, where: list[str], params: list) -> str:
    """The FROM clause: with a text search, the full-text index drives the join (CROSS JOIN
    keeps SQLite from walking a column index and probing the text index row by row)."""
    if not search:
        return " FROM incidents"
    where.insert(0, "incidents_fts MATCH ?")
    params.insert(0, fts_query(search))
    return " FROM incidents_fts CROSS JOIN incidents ON incidents.id = incidents_fts.rowid"


def listing(
    *,
    status: str | None = None,
    category: str | None = None,
    rule_id: str | None = None,
    since: str | None = None,
    search: str | None = None,
    limit: int | None = None,
    before: tuple[str, int] | None = None,
    columns: str = "incidents.*",
) -> SQL:
    """Incidents matching the filters, most recently seen first (ties: the newest id first);
    ``before`` = (last_seen, id) of the last row of the previous page."""
    where, params = _filters(status, category, rule_id, since)
    if before is not None:
        where.append("(incidents.last_seen, incidents.id) < (?, ?)")
        params.extend(before)
    sql = f"SELECT {columns}" + _from(search, where, params)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY incidents.last_seen DESC, incidents.id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return sql, params


def count(
    *,
    status: str | None = None,
    category: str | None = None,
    rule_id: str | None = None,
    since: str | None = None,
    search: str | None = None,
) -> SQL:
    """How many incidents match: from ``incident_counts`` when only status, category and rule
    filter; else a count over the index range (``since``) or the text index's hits."""
    if not (since or search):
        where, params = _filters(status, category, rule_id, None)
        sql = "SELECT ifnull(sum(n), 0) FROM incident_counts"
        if where:
            sql += " WHERE " + " AND ".join(w.removeprefix("incidents.") for w in where)
        return sql, params
    where, params = _filters(status, category, rule_id, since)
    sql = "SELECT count(*)" + _from(search, where, params) + " WHERE " + " AND ".join(where)
    return sql, params


def categories() -> SQL:
    """The categories of the stored incidents, in order (from ``incident_counts``)."""
    return (
        "SELECT DISTINCT category FROM incident_counts WHERE category != '' ORDER BY category",
        [],
    )


# --- one incident ---------------------------------------------------------------------------------


def incident(incident_id: int) -> SQL:
    return "SELECT * FROM incidents WHERE id = ?", [incident_id]


def occurrences(incident_id: int) -> SQL:
    return "SELECT * FROM occurrences WHERE incident_id = ? ORDER BY seen_at, id", [incident_id]


def latest_occurrence(incident_id: int) -> SQL:
    return (
        "SELECT excerpt, report FROM occurrences WHERE incident_id = ? "
        "ORDER BY seen_at DESC, id DESC LIMIT 1",
        [incident_id],
    )


def tickets(incident_id: int) -> SQL:
    return "SELECT ref, created_at FROM tickets WHERE incident_id = ? ORDER BY id", [incident_id]


def resolved_among(ids: list[int]) -> SQL:
    """Which of these incidents are resolved: looked up by id (``+status`` keeps SQLite from
    reading every resolved incident through the status index instead)."""
    marks = ",".join("?" * len(ids))
    return f"SELECT id FROM incidents WHERE id IN ({marks}) AND +status = 'resolved'", list(ids)


def by_fingerprint(fingerprint: str) -> SQL:
    return "SELECT id FROM incidents WHERE fingerprint = ?", [fingerprint]


def by_log_hash(log_hash: str) -> SQL:
    return "SELECT incident_id, id FROM occurrences WHERE log_hash = ? LIMIT 1", [log_hash]


# --- similar-incident candidates ------------------------------------------------------------------


def signature_match(words: list[str], join: str = "OR") -> str:
    """An FTS query for signatures holding the words (``join``: OR or AND)."""
    return "signature : (" + f" {join} ".join(f'"{w}"' for w in words) + ")"


def recent_matches(word: str, after: int, most: int | None = None) -> SQL:
    """How many of the incidents after id ``after`` have the word in their signature (how
    common a word is, measured on the latest incidents: a bounded read at any store size);
    with ``most``, counted up to ``most`` only (whether a word is that common, read no
    further)."""
    sql = "SELECT count(*) FROM incidents_fts WHERE incidents_fts MATCH ? AND rowid > ?"
    if most is None:
        return sql, [signature_match([word]), after]
    sql = sql.replace("count(*)", "1", 1)
    return f"SELECT count(*) FROM ({sql} LIMIT ?)", [signature_match([word]), after, most]


def highest_id() -> SQL:
    """The store's size, near enough, without counting: the largest incident id."""
    return "SELECT max(rowid) FROM incidents", []


def matching_ids(words: list[str], join: str, limit: int | None = None) -> SQL:
    """The ids of the incidents whose signature holds the words, newest first."""
    sql = "SELECT rowid FROM incidents_fts WHERE incidents_fts MATCH ? ORDER BY rowid DESC"
    return sql + (f" LIMIT {int(limit)}" if limit else ""), [signature_match(words, join)]


def matching_id_list(word: str) -> SQL:
    """The ids of the incidents whose signature holds the word, as one comma-separated text
    in no particular order (one row instead of one per incident), or NULL."""
    return (
        "SELECT group_concat(rowid) FROM incidents_fts WHERE incidents_fts MATCH ?",
        [signature_match([word])],
    )


def candidates_by_id(ids: list[int], rules: list[str] | None = None) -> SQL:
    """The candidate columns of these incidents; with ``rules``, of those whose rule is one of
    them or none (``+rule_id``: each looked up by id, not through the rule's index)."""
    marks = ",".join("?" * len(ids))
    sql = f"SELECT {CANDIDATE} FROM incidents WHERE id IN ({marks})"
    if rules is None:
        return sql, list(ids)
    sql += f" AND (+rule_id IS NULL OR +rule_id IN ({','.join('?' * len(rules))}))"
    return sql, [*ids, *rules]


def candidate_by_fingerprint(fingerprint: str) -> SQL:
    """The candidate columns of the incident with this fingerprint."""
    return f"SELECT {CANDIDATE} FROM incidents WHERE fingerprint = ?", [fingerprint]


def candidates_by_rule(rule_id: str, limit: int) -> SQL:
    """The latest incidents of one rule."""
    return (
        f"SELECT {CANDIDATE} FROM incidents WHERE rule_id = ? ORDER BY last_seen DESC LIMIT ?",
        [rule_id, limit],
    )


def fts_query(text: str) -> str:
    """A user's words as an FTS query: each word quoted, all required."""
    words = [w.replace('"', '""') for w in text.split() if w]
    return " ".join(f'"{w}"' for w in words) or '""'
