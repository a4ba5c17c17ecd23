"""The incident store: SQLite through sqlite-utils.

One row per incident (a coarse fingerprint: the same bug), one per occurrence (each log seen),
ticket links, and full-text search over titles, messages and resolutions. The schema moves
forward through numbered migrations recorded in ``PRAGMA user_version``, so an older database
opens and upgrades in place. Writes happen in ``BEGIN IMMEDIATE`` transactions with WAL and a
busy timeout, so several processes can ingest into one database at once and a crash mid-write
leaves it consistent.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracelens.incidents import queries, search
from tracelens.incidents.connection import Database, StoreError, connect
from tracelens.incidents.records import (
    Candidate,
    Excerpt,
    Incident,
    IncidentRow,
    Recorded,
    StoredOccurrence,
    TicketLink,
    decode_excerpt,
    decode_report,
    encode_document,
    encode_excerpt,
    encode_report,
    evidence_lines,
    occurrence_from_row,
    parse_numbered,
)
from tracelens.paths import store_file

if TYPE_CHECKING:
    import sqlite_utils

STATUSES = ("open", "resolved", "ignored")
DOCUMENT_LIMIT = 16 << 20  # bytes of a compressed parsed log (a larger one is not kept)
DOCUMENTS_KEPT = 3  # an incident's newest occurrences whose parsed log is kept


def default_path() -> Path:
    """``TRACELENS_DB``, else ``$XDG_DATA_HOME/tracelens/incidents.db`` (``~/.local/share``)."""
    from tracelens.paths import default_db

    return default_db()


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


# --- migrations ---------------------------------------------------------------------------------


def _m1_initial(db: sqlite_utils.Database) -> None:
    db.table("incidents").create(
        {
            "id": int,
            "fingerprint": str,
            "signature": str,
            "title": str,
            "category": str,
            "rule_id": str,
            "exception_type": str,
            "message": str,
            "first_seen": str,
            "last_seen": str,
            "count": int,
            "status": str,
            "resolution_note": str,
            "remedy_worked": str,
        },
        pk="id",
        not_null={"fingerprint", "first_seen", "last_seen", "count", "status"},
        defaults={"count": 1, "status": "open"},
    )
    db.table("incidents").create_index(["fingerprint"], unique=True)
    db.table("incidents").create_index(["last_seen"])
    db.table("occurrences").create(
        {
            "id": int,
            "incident_id": int,
            "fingerprint_fine": str,
            "signature_fine": str,
            "seen_at": str,
            "source": str,
            "host": str,
            "excerpt": bytes,
            "report": bytes,
        },
        pk="id",
        foreign_keys=[("incident_id", "incidents", "id")],
    )
    db.table("occurrences").create_index(["incident_id"])
    db.table("tickets").create(
        {"id": int, "incident_id": int, "ref": str, "created_at": str},
        pk="id",
        foreign_keys=[("incident_id", "incidents", "id")],
    )
    db.table("incidents").enable_fts(["title", "message", "resolution_note"], create_triggers=True)


def _m2_severity_and_resolution_time(db: sqlite_utils.Database) -> None:
    db.table("incidents").add_column("severity", str)
    db.table("incidents").add_column("resolved_at", str)
    db.table("occurrences").create_index(["fingerprint_fine"])


def _m3_search_signatures(db: sqlite_utils.Database) -> None:
    # the signature joins the full-text index, so similar-incident search can pick candidates
    # from an index instead of reading every incident
    db.table("incidents").disable_fts()
    db.table("incidents").enable_fts(
        ["title", "message", "resolution_note", "signature"], create_triggers=True
    )
    db.execute("CREATE VIRTUAL TABLE incidents_fts_vocab USING fts5vocab(incidents_fts, 'row')")


def _m4_log_hashes(db: sqlite_utils.Database) -> None:
    # the content hash of each ingested log: ingesting the same log again counts nothing twice
    db.table("occurrences").add_column("log_hash", str)
    db.table("occurrences").create_index(["log_hash"])


def _m5_documents(db: sqlite_utils.Database) -> None:
    # an occurrence's parsed log (lines, tracebacks, errors, facts), redacted and compressed:
    # a stored incident's log reads like a live one's (older occurrences keep their excerpt)
    db.table("documents").create(
        {"occurrence_id": int, "data": bytes},
        pk="occurrence_id",
        foreign_keys=[("occurrence_id", "occurrences", "id")],
    )


def _m6_indexes(db: sqlite_utils.Database) -> None:
    # every list, count and similar search is served by an index (tracelens/incidents/queries.py)
    queries.add_indexes(db.conn)


def _m7_structured_excerpts(db: sqlite_utils.Database) -> None:
    # excerpts were "N: text" lines; now records (line, text, process, evidence): the old ones
    # are converted (their process is unknown; their evidence marks come from the report)
    rows = db.execute("SELECT id, excerpt, report FROM occurrences").fetchall()
    for occ_id, blob, report in rows:
        text = zlib.decompress(blob).decode("utf-8", "replace") if blob else ""
        if text.startswith("{"):
            continue
        data = json.loads(zlib.decompress(report)) if report else None
        new = encode_excerpt(parse_numbered(text, evidence_lines(data)))
        db.execute("UPDATE occurrences SET excerpt = ? WHERE id = ?", [new, occ_id])


MIGRATIONS: tuple[Callable[[sqlite_utils.Database], None], ...] = (
    _m1_initial,
    _m2_severity_and_resolution_time,
    _m3_search_signatures,
    _m4_log_hashes,
    _m5_documents,
    _m6_indexes,
    _m7_structured_excerpts,
)
"""Migration N (1-based) brings a database from ``user_version`` N-1 to N. Append only."""


class Store:
    """An open incident database."""

    def __init__(
        self, path: Path | str | None = None, *, create: bool = True, migrations=MIGRATIONS
    ):
        self.path = store_file(path)
        if not create and not self.path.exists():
            raise StoreError(
                f"{self.path}: no incident database yet (save one with 'tracelens diagnose --save')"
            )
        self.db = Database(connect(self.path))
        self._checked = False
        self._migrate(migrations)

    def close(self) -> None:
        self.db.conn.close()

    # transactions -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[None]:
        """A write transaction; a database that cannot be written (read-only, full disk,
        damaged) is a :class:`StoreError` and leaves it as it was. The first write of a
        process checks the database's integrity first."""
        conn = self.db.conn
        if not self._checked:
            self.check_integrity()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot write ({exc})") from None
        try:
            yield
        except BaseException as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # SQLite already rolled back (a full disk, an I/O error)
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{self.path}: cannot write ({exc})") from None
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot write ({exc})") from None

    def check_integrity(self) -> None:
        """Refuse a damaged database before anything is written into it (``PRAGMA
        quick_check``: every page and index is read once)."""
        try:
            rows = [r[0] for r in self.db.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            rows = [str(exc)]
        if rows != ["ok"]:
            # one line: quick_check's first finding, under its "*** in database main ***" header
            detail = " ".join(rows[0].replace("*** in database main ***", "").split())
            if "malformed" not in detail:
                detail = f"database disk image is malformed: {detail}"
            raise StoreError(
                f"{self.path}: the database is damaged ({detail}); nothing was written. "
                f"Restore a copy, or rebuild it with: sqlite3 {self.path} .recover"
            )
        self._checked = True

    def _migrate(self, migrations) -> None:
        try:
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            if version > len(migrations):
                raise StoreError(f"{self.path}: made by a newer tracelens (schema {version})")
            if version == len(migrations):
                return
            with self._write():
                version = self.db.execute("PRAGMA user_version").fetchone()[0]
                for k in range(version, len(migrations)):
                    migrations[k](self.db.full)
                    self.db.execute(f"PRAGMA user_version = {k + 1}")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable incident database ({exc})") from None

    @property
    def schema_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    # writing ------------------------------------------------------------------------------

    def record(
        self,
        *,
        fingerprint: str,
        signature: str,
        fingerprint_fine: str,
        signature_fine: str,
        title: str,
        category: str,
        rule_id: str,
        severity: str,
        exception_type: str,
        message: str,
        source: str,
        host: str | None,
        excerpt: Excerpt | str | bytes,
        report: dict | bytes,
        seen_at: str | None = None,
        log_hash: str | None = None,
        recount: bool = False,
        document: dict | bytes | None = None,
    ) -> Recorded:
        """Add one occurrence; the same coarse fingerprint increments its incident. A log
        whose ``log_hash`` is already stored counts nothing again, unless ``recount``.
        ``excerpt``: the lines kept (or their numbered text form, ``N: text`` lines).
        ``document``: the parsed log, redacted (see :mod:`tracelens.incidents.logdoc`).
        ``excerpt``, ``report`` and ``document`` may come already encoded as the store keeps
        them (:func:`~tracelens.incidents.records.encoded`: what a worker process sends)."""
        seen_at = seen_at or now()
        if isinstance(excerpt, str):
            excerpt = parse_numbered(excerpt)
        excerpt_blob = excerpt if isinstance(excerpt, bytes) else encode_excerpt(excerpt)
        report_blob = report if isinstance(report, bytes) else encode_report(report)
        blob = document if document is None or isinstance(document, bytes) else None
        if isinstance(document, dict):
            blob = encode_document(document)
        with self._write():
            if log_hash is not None and not recount:
                seen = self.db.execute(*queries.by_log_hash(log_hash)).fetchone()
                if seen is not None:
                    return Recorded(int(seen[0]), int(seen[1]), False, duplicate=True)
            row = self.db.execute(*queries.by_fingerprint(fingerprint)).fetchone()
            if row is None:
                incident_id = self.db.insert(
                    "incidents",
                    {
                        "fingerprint": fingerprint,
                        "signature": signature,
                        "title": title,
                        "category": category,
                        "rule_id": rule_id,
                        "severity": severity,
                        "exception_type": exception_type,
                        "message": message[:2000],
                        "first_seen": seen_at,
                        "last_seen": seen_at,
                        "count": 1,
                        "status": "open",
                    },
                )
                new = True
            else:
                incident_id = row[0]
                self.db.execute(
                    "UPDATE incidents SET count = count + 1, last_seen = max(last_seen, ?) WHERE id = ?",
                    [seen_at, incident_id],
                )
                new = False
            occ = self.db.insert(
                "occurrences",
                {
                    "incident_id": incident_id,
                    "fingerprint_fine": fingerprint_fine,
                    "signature_fine": signature_fine,
                    "seen_at": seen_at,
                    "source": source,
                    "host": host,
                    "excerpt": excerpt_blob,
                    "report": report_blob,
                    "log_hash": log_hash,
                },
            )
            if blob is not None and len(blob) <= DOCUMENT_LIMIT:
                self.db.insert("documents", {"occurrence_id": occ, "data": blob})
                self.db.execute(
                    "DELETE FROM documents WHERE occurrence_id IN (SELECT id FROM occurrences"
                    " WHERE incident_id = ? ORDER BY seen_at DESC, id DESC LIMIT -1 OFFSET ?)",
                    [incident_id, DOCUMENTS_KEPT],
                )
        return Recorded(int(incident_id), occ, new)

    def resolve(self, incident_id: int, remedy: str | None, note: str | None) -> None:
        self._require(incident_id)
        with self._write():
            self.db.table("incidents").update(
                incident_id,
                {
                    "status": "resolved",
                    "remedy_worked": remedy,
                    "resolution_note": note,
                    "resolved_at": now(),
                },
            )

    def set_status(self, incident_id: int, status: str) -> None:
        if status not in STATUSES:
            raise StoreError(f"status must be one of {', '.join(STATUSES)}")
        self._require(incident_id)
        with self._write():
            self.db.table("incidents").update(incident_id, {"status": status})

    def attach(self, incident_id: int, ref: str) -> int:
        self._require(incident_id)
        with self._write():
            pk = (
                self.db.table("tickets")
                .insert({"incident_id": incident_id, "ref": ref, "created_at": now()})
                .last_pk
            )
            assert pk is not None  # an insert into a rowid table always has its key
            return int(pk)

    # reading ------------------------------------------------------------------------------

    def has_log(self, log_hash: str) -> bool:
        """Whether a log with this content hash is already stored."""
        return self.db.execute(*queries.by_log_hash(log_hash)).fetchone() is not None

    def _require(self, incident_id: int) -> dict:
        rows = list(self.db.query(*queries.incident(incident_id)))
        if not rows:
            raise StoreError(f"no incident {incident_id}")
        return rows[0]

    def incident(self, incident_id: int) -> Incident:
        """An incident with its occurrences (oldest first) and tickets."""
        inc = Incident.from_row(self._require(incident_id))
        inc.occurrences = [
            occurrence_from_row(occ) for occ in self.db.query(*queries.occurrences(incident_id))
        ]
        inc.tickets = [TicketLink(**t) for t in self.db.query(*queries.tickets(incident_id))]
        return inc

    def latest_occurrence(self, incident_id: int) -> StoredOccurrence:
        """The excerpt and the report (with its parsed log, where one was kept) of the newest
        occurrence."""
        row = self.db.execute(*queries.latest_occurrence(incident_id)).fetchone()
        if row is None:
            return StoredOccurrence(excerpt=Excerpt())
        from tracelens.incidents.logdoc import load_document

        return StoredOccurrence(
            excerpt=decode_excerpt(row[0]),
            report=decode_report(row[1], load_document(self, incident_id)),
        )

    def incidents(self, *, limit: int | None = None, **filters: Any) -> list[Incident]:
        """Incidents matching the filters (``status``, ``category``, ``rule_id``, ``since``,
        ``search``), most recently seen first (how many match in all: :meth:`count`)."""
        return [
            Incident.from_row(row)
            for row in self.db.query(*queries.listing(limit=limit, **filters))
        ]

    def count(self, **filters: Any) -> int:
        """How many incidents match the filters of :meth:`incidents`."""
        return int(self.db.execute(*queries.count(**filters)).fetchone()[0])

    def categories(self) -> list[str]:
        """The categories of the stored incidents, in order."""
        return [r[0] for r in self.db.execute(*queries.categories())]

    def resolved(self, ids: list[int]) -> set[int]:
        """Which of these incidents are resolved."""
        return {r[0] for r in self.db.execute(*queries.resolved_among(ids))} if ids else set()

    def listing(self, limit: int | None = None, **filters: Any) -> list[IncidentRow]:
        """The columns an incident list shows, most recent first (filters: :meth:`incidents`;
        ``before``: (last_seen, id) of the previous page's last row)."""
        cur = self.db.execute(*queries.listing(limit=limit, columns=queries.LISTING, **filters))
        return [IncidentRow(*row) for row in cur]

    def candidates(
        self, words: list[str], rule_id: str | None, limit: int = 1000
    ) -> list[Candidate]:
        """The incidents most likely to resemble a failure: those whose signature shares the
        most of its rare words (the rarest word's incidents first, newest first), and the
        latest ones of the same rule."""
        return [Candidate(*row) for row in search.candidate_rows(self.db, words, rule_id, limit)]
