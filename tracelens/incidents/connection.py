"""The incident store's connection: plain ``sqlite3`` for reading, sqlite-utils on first use.

Reading a store (the similar-incident search ``diagnose`` runs whenever one exists, the
incident list, the TUI's first screen) needs only SQL through ``sqlite3``. Importing
sqlite-utils costs more than that whole search (about 120 ms of CPU on a loaded 2-core machine,
against 25 ms for a similar search over a million incidents), so it is imported when something
uses more than ``execute`` and ``query``: a migration, a table's insert or update, ``db[...]``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

SCHEMA = 7
"""The schema version this tracelens reads and writes: the number of the store's migrations
(:data:`tracelens.incidents.store.MIGRATIONS`; a test checks that they agree)."""


class StoreError(Exception):
    """The database cannot be used (one-line message)."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at ``path`` as every store opens it (WAL, a busy timeout,
    foreign keys; its folder made first)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=60, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 60000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA recursive_triggers = ON")  # as sqlite-utils sets it
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{path}: cannot open the database ({exc})") from None
    return conn


class Reader:
    """An existing store at the current schema, opened to read: its ``db`` and ``path`` as a
    :class:`~tracelens.incidents.store.Store` has them, without importing the store's module
    (its records, JSON and compression: more than a similar search over a million
    incidents)."""

    def __init__(self, db: Database, path: Path):
        self.db = db
        self.path = path

    def close(self) -> None:
        self.db.conn.close()


class Database:
    """A connection with sqlite-utils' ``execute`` and ``query``; every other attribute is
    sqlite-utils' :class:`~sqlite_utils.Database` over the same connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters or ())

    def query(self, sql: str, params: Any = None) -> Iterator[dict]:
        """The rows as dicts (column name: value)."""
        cursor = self.conn.execute(sql, params or ())
        names = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(names, row))

    def insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row and return its rowid (plain SQL: sqlite-utils' insert reads the
        table's columns first, once a row)."""
        names = ", ".join(f"[{name}]" for name in row)
        marks = ", ".join("?" * len(row))
        sql = f"INSERT INTO [{table}] ({names}) VALUES ({marks})"
        rowid = self.conn.execute(sql, list(row.values())).lastrowid
        assert rowid is not None  # an insert into a rowid table always has its key
        return rowid

    @cached_property
    def full(self) -> sqlite_utils.Database:
        """sqlite-utils' Database (imported now)."""
        from tracelens.incidents.sqlitelib import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.full, name)

    def __getitem__(self, name: str) -> Any:
        return self.full[name]
