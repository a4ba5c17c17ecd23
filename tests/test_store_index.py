"""The incident store's indexes: every query the incident list, the TUI, similar search and
diagnose run is answered from an index (``EXPLAIN QUERY PLAN`` over each query builder, and
over every statement those code paths actually run); the migration that adds the indexes to
an existing store; the counts table the triggers keep."""

from __future__ import annotations

import re
import sqlite3
import zlib
from pathlib import Path

import pytest
from tiers import one_quick
from tui_fixtures import run

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.incidents import queries
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.similar import attach_similar, similar
from tracelens.incidents.store import MIGRATIONS, Store, _m6_indexes

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
OOM = ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log"
NCCL = ROOT / "corpus" / "captured" / "gpu" / "nccl-duplicate-gpu.log"
INDEXED = MIGRATIONS.index(_m6_indexes)
"""The schema version before the indexes (a store written by the previous release)."""

CATEGORIES = ("gpu-oom", "nccl", "config", "network")
RULES = ("torch/gpu-oom", "nccl/watchdog-timeout", None)
STATUSES = ("open", "resolved", "ignored")


def _incident(k: int) -> tuple:
    day = f"2025-{1 + k % 12:02d}-{1 + k % 28:02d}T{k % 24:02d}:00:00+00:00"
    return (
        f"{k:016x}",
        f"{RULES[k % 3] or '-'} | RuntimeError | cuda memory word{k % 50} | forward",
        f"incident {k} cuda memory",
        CATEGORIES[k % 4],
        RULES[k % 3],
        "RuntimeError",
        f"cuda memory word{k % 50}",
        day,
        day,
        1 + k % 5,
        STATUSES[k % 3],
    )


def fill(store: Store, n: int) -> None:
    """``n`` incidents with an occurrence and a ticket each, in one transaction."""
    conn = store.db.conn
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO incidents (fingerprint, signature, title, category, rule_id, exception_type, "
        "message, first_seen, last_seen, count, status) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [_incident(k) for k in range(n)],
    )
    excerpt, report = zlib.compress(b"1: RuntimeError: CUDA error"), zlib.compress(b"{}")
    conn.executemany(
        "INSERT INTO occurrences (incident_id, seen_at, source, excerpt, report) "
        "VALUES (?, '2025-01-01', 'a.log', ?, ?)",
        [(k, excerpt, report) for k in range(1, n + 1)],
    )
    conn.executemany(
        "INSERT INTO tickets (incident_id, ref, created_at) VALUES (?, 'OPS-1', '2025-01-01')",
        [(k,) for k in range(1, n + 1, 7)],
    )
    conn.execute("COMMIT")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    s = Store(tmp_path_factory.mktemp("index") / "incidents.db")
    fill(s, 400)
    for log in (SEED, OOM, NCCL):
        save(s, diagnose(log.read_bytes()), Redactor(), log.name)
    return s


def plan(store: Store, sql: str, params=()) -> list[str]:
    return [row[3] for row in store.db.execute("EXPLAIN QUERY PLAN " + sql, list(params))]


TABLES = r"(incidents|occurrences|tickets|documents)"
WALK = re.compile(rf"^SCAN {TABLES} USING (COVERING )?INDEX idx_incidents_last_seen$")
COARSE = re.compile(r"^SEARCH incidents USING (COVERING )?INDEX \w+ \((status|category)=\?\)$")
"""A seek on a column of a few values alone: it reads a third of the table, unless it walks
the index in the list's order and a LIMIT stops it."""


def unindexed(sql: str, lines: list[str]) -> list[str]:
    """The plan lines that read a table (or the text index) without an index seek. A walk
    down the ``last_seen`` index is allowed only where nothing filters it and a LIMIT stops
    it: it reads as many rows as it returns."""
    bad = []
    bounded = re.search(r" ORDER BY .* LIMIT \d+$", sql) and not any("TEMP" in x for x in lines)
    for line in lines:
        if COARSE.match(line) and not bounded:
            bad.append(line)
        elif line.startswith("SEARCH ") or re.match(r"^SCAN incident_counts\b", line):
            continue  # an index seek; the counts table has one row per category/rule/status
        if m := re.match(r"^SCAN (\w+) VIRTUAL TABLE INDEX (\d+):(\S*)", line):
            if (m[1] == "incidents_fts" and "M" in m[3]) or (
                m[1] != "incidents_fts" and m[2] != "0"
            ):
                continue  # a MATCH, or the vocabulary's term lookup
        if WALK.match(line) and " WHERE " not in sql and re.search(r" LIMIT \d+$", sql):
            continue
        if line.startswith("USE TEMP B-TREE FOR ORDER BY") and "incidents_fts MATCH" in sql:
            continue  # sorting the text index's hits by date
        if re.match(rf"^SCAN {TABLES}\b|^SCAN \w+ VIRTUAL TABLE|^USE TEMP B-TREE", line):
            bad.append(line)
    return bad


FILTERS = [
    {},
    {"status": "open"},
    {"category": "nccl"},
    {"rule_id": "torch/gpu-oom"},
    {"since": "2025-06-01"},
    {"search": "cuda memory"},
    {"status": "resolved", "category": "gpu-oom"},
    {"status": "open", "since": "2025-06-01"},
    {"category": "config", "rule_id": "torch/gpu-oom"},
    {"rule_id": "nccl/watchdog-timeout", "since": "2025-03-01"},
    {"category": "nccl", "search": "memory"},
    {"status": "open", "category": "nccl", "rule_id": "torch/gpu-oom", "since": "2025-02-01"},
    {"status": "ignored", "search": "incident", "since": "2025-02-01"},
]

BUILDERS = [
    *[(f"list {f}", lambda f=f: queries.listing(**f, limit=50)) for f in FILTERS],
    *[(f"count {f}", lambda f=f: queries.count(**f)) for f in FILTERS],
    ("next page", lambda: queries.listing(limit=20_000, before=("2025-06-01", 9))),
    (
        "next page of a status",
        lambda: queries.listing(status="open", limit=200, before=("2025-06-01", 9)),
    ),
    ("TUI first page", lambda: queries.listing(limit=200, columns=queries.LISTING)),
    ("category list", queries.categories),
    ("incident", lambda: queries.incident(5)),
    ("occurrences", lambda: queries.occurrences(5)),
    ("latest occurrence", lambda: queries.latest_occurrence(5)),
    ("tickets", lambda: queries.tickets(8)),
    ("by fingerprint", lambda: queries.by_fingerprint("0000000000000005")),
    ("resolved among", lambda: queries.resolved_among([3, 5, 8, 13, 21])),
    ("by log hash", lambda: queries.by_log_hash("ab" * 32)),
    ("how common a word is", lambda: queries.recent_matches("word7", 150)),
    ("whether a word is that common", lambda: queries.recent_matches("word7", 150, 51)),
    ("incidents with a word, as one text", lambda: queries.matching_id_list("word7")),
    ("store size", queries.highest_id),
    ("incidents with a word", lambda: queries.matching_ids(["word7"], "OR")),
    ("incidents with all words", lambda: queries.matching_ids(["cuda", "memory"], "AND", 1000)),
    ("candidates by id", lambda: queries.candidates_by_id([3, 5, 8, 13, 21])),
    ("candidates by id, of some rules", lambda: queries.candidates_by_id([3, 5], ["r/a", ""])),
    ("candidates of a rule", lambda: queries.candidates_by_rule("torch/gpu-oom", 200)),
    ("candidate by fingerprint", lambda: queries.candidate_by_fingerprint("0000000000000005")),
]


@pytest.mark.parametrize("name, build", BUILDERS, ids=[b[0] for b in BUILDERS])
def test_every_query_is_served_by_an_index(store, name, build):
    sql, params = build()
    lines = plan(store, sql, params)
    assert lines and unindexed(sql, lines) == [], (sql, lines)


@pytest.mark.parametrize(
    "sql, line",
    [
        ("SELECT * FROM incidents WHERE title = 'x'", "SCAN incidents"),
        ("SELECT count(*) FROM incidents", "SCAN incidents USING COVERING INDEX"),
        ("SELECT DISTINCT category FROM incidents", "SCAN incidents"),
        ("SELECT * FROM occurrences WHERE source = 'a.log'", "SCAN occurrences"),
        ("SELECT * FROM incidents ORDER BY count LIMIT 5", "SCAN incidents"),
        ("SELECT * FROM incidents WHERE title = 'x' ORDER BY last_seen LIMIT 5", "SCAN incidents"),
        (
            "SELECT id FROM incidents WHERE status = 'resolved' AND id IN (3, 5)",
            "SEARCH incidents USING COVERING INDEX idx_incidents_status_last_seen (status=?)",
        ),
        ("SELECT id FROM incidents WHERE category = 'nccl' LIMIT 5", "SEARCH incidents"),
    ],
)
def test_the_plan_check_catches_table_scans(store, sql, line):
    assert any(bad.startswith(line) for bad in unindexed(sql, plan(store, sql)))


@pytest.mark.parametrize("filters", FILTERS, ids=[",".join(f) or "none" for f in FILTERS])
def test_lists_and_counts_answer_as_a_scan_would(store, filters):
    sql = "SELECT incidents.id FROM incidents"
    where, params = [], []
    for column in ("status", "category", "rule_id"):
        if filters.get(column):
            where.append(f"{column} = ?")
            params.append(filters[column])
    if filters.get("since"):
        where.append("last_seen >= ?")
        params.append(filters["since"])
    if filters.get("search"):
        where.append("id IN (SELECT rowid FROM incidents_fts WHERE incidents_fts MATCH ?)")
        params.append(queries.fts_query(filters["search"]))
    sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY last_seen DESC, id DESC"
    expected = [r[0] for r in store.db.execute(sql, params)]
    assert [r.id for r in store.listing(50, **filters)] == expected[:50]
    assert len(store.incidents(**filters, limit=50)) == len(expected[:50])
    assert store.count(**filters) == len(expected) > 0


@pytest.mark.parametrize("rule", ["torch/gpu-oom", "nccl/watchdog-timeout", "no/such-rule"])
def test_incidents_list_filters_by_rule(store, capsys, rule):
    assert (
        main(["incidents", "list", "--db", str(store.path), "--rule", rule, "--limit", "500"]) == 0
    )
    out = capsys.readouterr().out
    expected = store.db.execute(
        "SELECT count(*) FROM incidents WHERE rule_id = ?", [rule]
    ).fetchone()[0]
    assert (f"{expected} of {expected} incident(s)" in out) if expected else "no incidents" in out


def test_pages_follow_one_another(store):
    pages, before = [], None
    while page := store.listing(37, before=before):
        pages += page
        before = (page[-1].last_seen, page[-1].id)
    assert [r.id for r in pages] == [r.id for r in store.listing()]
    assert len(pages) == store.count()


@pytest.mark.parametrize(
    "words, rule_id, expected",
    [
        ([], None, set()),
        (["zzzq", "qqqz"], None, set()),  # in no signature
        (["word7"], None, {k + 1 for k in range(400) if k % 50 == 7}),  # rare: all of them
        (["zzzq"], "nccl/watchdog-timeout", {k + 1 for k in range(400) if k % 3 == 1}),
        # every word common: incidents with all of the three rarest
        (["cuda", "memory", "forward"], None, {k + 1 for k in range(400)}),
    ],
)
def test_candidates(store, words, rule_id, expected):
    found = {c.id for c in store.candidates(words, rule_id)}
    assert found & set(range(1, 401)) == expected


def test_candidates_share_the_most_rare_words_first(tmp_path):
    store = Store(tmp_path / "w.db")
    for k, sig in enumerate(["alpha beta gamma", "alpha", "beta", "gamma beta", "delta"]):
        store.db["incidents"].insert(
            {"fingerprint": str(k), "signature": sig, "first_seen": "x", "last_seen": "x"}
        )
    rows = store.candidates(["alpha", "beta", "gamma"], None)
    assert [r.signature for r in rows] == ["alpha beta gamma", "gamma beta", "alpha", "beta"]


# --- the statements the code actually runs -------------------------------------------------------


@pytest.fixture()
def traced(store, monkeypatch):
    """Every SELECT run through a connection opened while the test runs."""
    seen: list[str] = []
    connect = sqlite3.connect

    def tracing(*args, **kwargs):
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(sqlite3, "connect", tracing)
    store.db.conn.set_trace_callback(seen.append)
    yield seen
    store.db.conn.set_trace_callback(None)


def _selects(seen: list[str]) -> list[str]:
    return sorted(
        {
            s
            for s in seen
            if s.lstrip().upper().startswith("SELECT")
            and "sqlite_master" not in s
            and re.search(rf"\b{TABLES}\b", s)
        }
    )


def _cli(store: Store, *args: str) -> None:
    assert main([*args, "--db", str(store.path)]) == 0


PATHS = [
    ("incidents list", lambda s: _cli(s, "incidents", "list")),
    (
        "incidents list, every filter",
        lambda s: _cli(
            s,
            "incidents",
            "list",
            "--status",
            "open",
            "--category",
            "gpu-oom",
            "--rule",
            "torch/gpu-oom",
            "--since",
            "2025-02-01",
            "--search",
            "memory",
            "--limit",
            "5",
        ),
    ),
    ("incidents list --since", lambda s: _cli(s, "incidents", "list", "--since", "2025-05-01")),
    ("incidents show", lambda s: _cli(s, "incidents", "show", "8")),
    ("similar", lambda s: similar(s, diagnose(OOM.read_bytes()))),
    ("diagnose with a store", lambda s: attach_similar(diagnose(SEED.read_bytes()), s.path)),
    ("the TUI's first screen", lambda s: _tui_first_screen(s.path)),
]


def _tui_first_screen(path: Path) -> None:
    from tracelens.tui import make_app
    from tracelens.tui.screens.incidents import IncidentsScreen

    async def steps(pilot, app):
        assert isinstance(app.screen, IncidentsScreen) and app.screen.rows

    run(make_app(db_path=path), steps, size=(100, 30))


@pytest.mark.parametrize("name, run", PATHS, ids=[p[0] for p in PATHS])
def test_what_the_code_runs_is_served_by_an_index(store, traced, name, run):
    run(store)
    statements = _selects(traced)
    assert statements
    for sql in statements:
        assert unindexed(sql, plan(store, sql)) == [], (sql, plan(store, sql))


# --- the migration ------------------------------------------------------------------------------

NEW_INDEXES = {
    "idx_incidents_status_last_seen",
    "idx_incidents_category_last_seen",
    "idx_incidents_rule_id_last_seen",
    "idx_occurrences_incident_id_seen_at",
    "idx_tickets_incident_id",
}


def _schema(db) -> set[tuple]:
    return set(db.execute("SELECT type, name, sql FROM sqlite_master").fetchall())


DUMPED = {
    "incidents": "id, fingerprint, title, category, rule_id, message, last_seen, count, status",
    "occurrences": "id, incident_id, seen_at, source",
    "tickets": "id, incident_id, ref, created_at",
}
"""Columns every schema version has."""


def _dump(db) -> dict[str, list]:
    return {
        t: db.execute(f"SELECT {cols} FROM {t} ORDER BY id").fetchall()
        for t, cols in DUMPED.items()
    }


def _counts(db) -> list[tuple]:
    """The counts table, and the same counts made the slow way: they must agree."""
    kept = db.execute("SELECT * FROM incident_counts ORDER BY 1, 2, 3").fetchall()
    made = db.execute(
        "SELECT ifnull(category, ''), ifnull(rule_id, ''), status, count(*) FROM incidents "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    ).fetchall()
    assert kept == made
    return kept


@pytest.mark.parametrize("version", [1, 4, INDEXED])
def test_an_older_store_gains_the_indexes_and_keeps_its_data(tmp_path, version):
    path = tmp_path / "old.db"
    old = Store(path, migrations=MIGRATIONS[:version])
    fill(old, 60)
    before = _dump(old.db)
    assert not NEW_INDEXES & {r[1] for r in _schema(old.db)}
    old.close()

    new = Store(path)
    assert new.schema_version == len(MIGRATIONS)
    names = {r[1] for r in _schema(new.db)}
    assert NEW_INDEXES <= names and "idx_occurrences_incident_id" not in names
    assert _dump(new.db) == before
    assert sum(n for *_key, n in _counts(new.db)) == 60
    assert new.categories() == sorted(CATEGORIES)
    assert [r.id for r in new.listing(3, search="incident")] == [
        r[0] for r in sorted(before["incidents"], key=lambda r: (r[6], r[0]), reverse=True)[:3]
    ]


def test_the_migration_is_idempotent(tmp_path):
    store = Store(tmp_path / "a.db")
    fill(store, 30)
    schema, counts = _schema(store.db), _counts(store.db)
    queries.add_indexes(store.db.conn)
    queries.add_indexes(store.db.conn)
    assert (_schema(store.db), _counts(store.db)) == (schema, counts)
    store.close()
    again = Store(tmp_path / "a.db")
    assert again.schema_version == len(MIGRATIONS) and _schema(again.db) == schema


# --- the counts table ---------------------------------------------------------------------------


def _record(store: Store, k: int, **extra) -> int:
    return store.record(
        fingerprint=f"fp{k}",
        signature="s",
        fingerprint_fine="f",
        signature_fine="s",
        title="t",
        category=extra.get("category", "gpu-oom"),
        rule_id=extra.get("rule_id", "torch/gpu-oom"),
        severity="high",
        exception_type="RuntimeError",
        message="m",
        source="a.log",
        host=None,
        excerpt="x",
        report={},
    ).incident_id


STEPS = {
    "new incidents": lambda s: [_record(s, 1), _record(s, 2, category="nccl", rule_id=None)],
    "a repeat": lambda s: [_record(s, 1), _record(s, 1)],
    "resolve": lambda s: s.resolve(_record(s, 1), "remedy", "note"),
    "ignore and reopen": lambda s: [
        s.set_status(i := _record(s, 3), "ignored"),
        s.set_status(i, "open"),
    ],
    "a category changes": lambda s: s.db.execute(
        "UPDATE incidents SET category = 'config' WHERE id = ?", [_record(s, 4)]
    ),
    "a delete": lambda s: [
        _record(s, 5),
        s.db.execute("DELETE FROM occurrences"),
        s.db.execute("DELETE FROM incidents WHERE fingerprint = 'fp5'"),
    ],
}


@pytest.mark.parametrize("step", list(STEPS))
def test_the_counts_table_follows_every_write(tmp_path, step):
    store = Store(tmp_path / "c.db")
    fill(store, 12)
    STEPS[step](store)
    _counts(store.db)
    assert store.count() == store.db.execute("SELECT count(*) FROM incidents").fetchone()[0]
    assert store.categories() == sorted(
        {r[0] for r in store.db.execute("SELECT category FROM incidents")}
    )


# --- the TUI's incident list on a store larger than one page -------------------------------------

BIG = 450  # more than the first page (SHOWN = 200)


@pytest.mark.parametrize(
    "widget, value, matched",
    one_quick(
        [
            (None, None, BIG),
            ("#status", "resolved", sum(1 for k in range(BIG) if STATUSES[k % 3] == "resolved")),
            ("#category", "nccl", sum(1 for k in range(BIG) if CATEGORIES[k % 4] == "nccl")),
        ],
        keep=1,
    ),
)
def test_tui_filters_a_large_store_from_its_indexes(tmp_path, widget, value, matched):
    from textual.widgets import DataTable, Select, Static

    from tracelens.tui import make_app
    from tracelens.tui.screens.incidents import SHOWN

    fill(Store(tmp_path / "big.db"), BIG)

    async def steps(pilot, app):
        screen = app.screen
        assert not screen.complete and len(screen.rows) == SHOWN  # the first page only
        if widget:
            screen.query_one(widget, Select).value = value
            await pilot.pause()
        assert screen.matched == matched and not screen.complete
        assert screen.query_one(DataTable).row_count == min(matched, SHOWN)
        assert f"{matched} of {BIG} incidents" in str(screen.query_one("#count", Static).render())

    run(make_app(db_path=tmp_path / "big.db"), steps, size=(100, 30))


def test_tui_reads_every_incident_for_the_word_filter(tmp_path):
    from textual.widgets import Input

    from tracelens.tui import make_app

    fill(Store(tmp_path / "big.db"), BIG)

    async def steps(pilot, app):
        screen = app.screen
        screen.query_one("#filter", Input).value = "incident"  # in every title
        while not screen.complete:
            await pilot.pause(0.05)
        assert len(screen.rows) == BIG
        assert [r.id for r in screen.rows] == [r.id for r in Store(tmp_path / "big.db").listing()]
        assert screen.matched == BIG

    run(make_app(db_path=tmp_path / "big.db"), steps, size=(100, 30))


@pytest.mark.parametrize("where", [0.5, 0.75])  # a page of whatever lies there
def test_a_damaged_page_is_one_line_before_a_write(tmp_path, capsys, where):
    db = tmp_path / "d.db"
    assert main(["ingest", "--db", str(db), str(SEED), str(OOM), str(NCCL)]) == 0
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    page = int(len(data) // size * where)
    data[page * size : (page + 1) * size] = b"\xde\xad\xbe\xef" * (size // 4)
    db.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["ingest", "--db", str(db), "--recount", str(SEED)]) == 2
    err = capsys.readouterr().err.replace("ingesting", "").strip()
    assert len(err.splitlines()) == 1 and "malformed" in err and "internal error" not in err
