"""One log diagnosed where it is read (in-process, a pool worker, a Ray task), as an
:class:`Outcome` that the one process writing the incident store merges.

A worker builds its rules and redactor once (:func:`setup`); under ``fork`` it inherits the
rules the parent already loaded. Everything an outcome carries is already redacted.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracelens.fleet.sniff import HEAD, not_a_log
from tracelens.read import formats
from tracelens.read.formats import HEAD as FORMAT_HEAD
from tracelens.read.formats import compression
from tracelens.read.scan import STREAM_LIMIT

WHOLE_LIMIT = 8 << 20
"""A log up to this size is read into memory once (hash and diagnosis); a larger one is hashed
as a stream and parsed from the file (only the windows around trouble)."""


@dataclass(frozen=True)
class Settings:
    """What every worker needs to diagnose and prepare a log the same way."""

    rules_dirs: tuple[str, ...] = ()
    redact_regex: tuple[str, ...] = ()
    no_redact: bool = False
    known_db: str | None = None
    """An incident store whose logs (by content hash) are not diagnosed again (read only)."""
    rows: bool = False
    """Make a results row (:mod:`tracelens.fleet.results`) for each log."""


@dataclass
class Outcome:
    """What became of one file."""

    source: str
    """The file's name as shown and stored (bytes that are not UTF-8 as escapes)."""
    skipped: str | None = None
    """Why it was not diagnosed: it cannot be read, or the analysis failed."""
    not_log: str | None = None
    """What the file is instead of a log (:func:`tracelens.fleet.sniff.not_a_log`)."""
    log_hash: str | None = None
    already: bool = False
    """Stored before (same content): not diagnosed again."""
    record: dict[str, Any] | None = None
    """The arguments of :meth:`~tracelens.incidents.store.Store.record`, redacted, with the
    excerpt, report and parsed log already encoded
    (:func:`~tracelens.incidents.records.encoded`); ``None`` for a log without a failure."""
    row: dict[str, Any] | None = field(default=None)
    """Its results row, when :attr:`Settings.rows`."""


def shown(path: Path | str) -> str:
    """A file name as text that can be printed and stored: bytes that are not UTF-8 are
    shown as escapes (``bad\\xff.log``)."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class _Capture:
    """Stands in for the store: keeps what :func:`~tracelens.incidents.incident.save` would
    record, so the worker prepares a log exactly as a direct save does."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] | None = None

    def record(self, **fields: Any) -> Any:
        self.fields = fields
        return None


_state: dict[str, Any] = {}


GC_THRESHOLD = 10_000
"""Allocations between two young-generation collections in a process that diagnoses many logs
(Python's default, 700, collected 168 times over 1,000 corpus logs, 2 % of the time; the
objects of one log are freed by their reference counts, and few are in cycles)."""


def setup(settings: Settings) -> None:
    """Build this process's rules and redactor (a pool's initializer)."""
    import gc

    from tracelens import facts
    from tracelens.incidents.redact import Redactor
    from tracelens.read import logread
    from tracelens.rulebook.load import default_rules

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    logread.expect_many()
    facts.expect_many()
    if _state.get("settings") == settings:
        return
    _state.clear()
    _state["settings"] = settings
    _state["rules"] = default_rules(tuple(settings.rules_dirs))
    _state["rules"].stamp_once()
    _state["redactor"] = Redactor(settings.redact_regex, enabled=not settings.no_redact)


def preload(settings: Settings) -> None:
    """Before a pool forks its workers: what every worker would otherwise make for itself
    from the same rule set (:func:`setup`, the modules that diagnose and prepare a log, the
    combined envelope regexes, the prefilter's and the fact triggers' set engines
    (:mod:`tracelens.literals`), the symptom wrappers), made once here and inherited."""
    from tracelens import (
        engine,  # noqa: F401 (imported for the workers)
        facts,
    )
    from tracelens.incidents import incident  # noqa: F401 (imported for the workers)
    from tracelens.read import logread
    from tracelens.rulebook.rank import _wrappers

    setup(settings)
    rules = _state["rules"]
    logread.warm()
    rules.prefilter.expect_many()
    if facts._occurrences() is None:  # no Hyperscan here: the triggers' automaton
        facts._automaton()
    _wrappers(rules)


def _known(digest: str) -> bool:
    """Whether the store already holds this log (read only; any error: not known)."""
    import sqlite3

    settings: Settings = _state["settings"]
    if settings.known_db is None or not os.path.exists(settings.known_db):
        return False
    try:
        if "known" not in _state:
            uri = Path(settings.known_db).resolve().as_uri() + "?mode=ro"
            _state["known"] = sqlite3.connect(uri, uri=True, check_same_thread=False)
        row = (
            _state["known"]
            .execute("SELECT 1 FROM occurrences WHERE log_hash = ? LIMIT 1", [digest])
            .fetchone()
        )
    except sqlite3.Error:
        return False
    return row is not None


def _prepare(outcome: Outcome, rep: Any) -> Outcome:
    from tracelens.incidents.incident import redact_value, save
    from tracelens.incidents.records import encoded

    redactor = _state["redactor"]
    capture = _Capture()
    save(capture, rep, redactor, outcome.source)  # type: ignore[arg-type]
    outcome.record = None if capture.fields is None else encoded(capture.fields)
    if outcome.record is not None:
        for key in ("seen_at", "log_hash", "recount"):
            outcome.record.pop(key, None)
    if _state["settings"].rows:
        top = rep.diagnoses[0] if rep.diagnoses else None
        rec = outcome.record or {}
        outcome.row = {
            "source": redactor(outcome.source),
            "log_hash": outcome.log_hash,
            "verdict": rep.verdict,
            "rule": top.rule_id if top else None,
            "category": top.category if top else None,
            "severity": top.severity if top else None,
            "title": redactor(top.title) if top else None,
            "fingerprint": rec.get("fingerprint"),
            "fingerprint_fine": rec.get("fingerprint_fine"),
            "facts": json.dumps(
                redact_value(rep.facts, redactor), sort_keys=True, ensure_ascii=False, default=str
            ),
            "error": None,
        }
    return outcome


def _failed(outcome: Outcome, message: str) -> Outcome:
    outcome.skipped = message
    if _state["settings"].rows:
        outcome.row = {"source": _state["redactor"](outcome.source), "verdict": "error"}
        outcome.row["error"] = message
    return outcome


def diagnose_data(data: bytes, source: str, size: int | None = None) -> Outcome:
    """Diagnose a log held in memory (``data``: the whole file)."""
    from tracelens import engine

    outcome = Outcome(source)
    try:  # a compressed log: what it holds is the log
        unpacked = formats.unpacked(data, STREAM_LIMIT)
    except formats.Unreadable as exc:
        return _failed(outcome, f"{source}: {exc}")
    if unpacked is not data:
        data, size = unpacked, None
    reason = not_a_log(data[:HEAD], len(data) if size is None else size)
    if reason is not None:
        outcome.not_log = reason
        return outcome
    outcome.log_hash = hashlib.sha256(data).hexdigest()
    if _known(outcome.log_hash):
        outcome.already = True
        return outcome
    try:
        rep = engine.report(engine.parse(data, source), _state["rules"])
        return _prepare(outcome, rep)
    except Exception as exc:  # noqa: BLE001 (a log that breaks the analysis: the others still go in)
        return _failed(outcome, f"{source}: could not be diagnosed ({type(exc).__name__}: {exc})")


def diagnose_path(path: str) -> Outcome:
    """Diagnose a local file: a small one read once, a large one parsed where it lies, a
    compressed one decompressed into a spool (memory, then a temporary file) first."""
    from tracelens.read.scan import InputError, open_input

    source = shown(path)
    opened = None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a pipe, a FIFO, a device: read as a stream
            fp, _size, _name = open_input(path)
            with fp:
                return diagnose_data(fp.read(), source)
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            head = fh.read(HEAD)
            packed = compression(head[:FORMAT_HEAD]) is not None
            if st.st_size <= WHOLE_LIMIT and not packed:
                data = head + fh.read()
                return diagnose_data(data, source, len(data))
            if not packed:
                not_log, digest = _hashed(fh, head, st.st_size, source)
                if not_log is not None:
                    return not_log
        if packed:
            opened = open_input(path)
            fp, size, _name = opened
            if size <= WHOLE_LIMIT:
                with fp:
                    return diagnose_data(fp.read(), source)
            not_log, digest = _hashed(fp, fp.read(HEAD), size, source)
            if not_log is not None:
                fp.close()
                return not_log
            fp.seek(0)
    except InputError as exc:
        return _failed(Outcome(source), shown(str(exc)))
    except OSError as exc:
        if opened is not None:
            opened[0].close()
        return _failed(Outcome(source), f"{source}: cannot read ({exc.strerror or exc})")
    return _diagnose_large(Outcome(source, log_hash=digest.hexdigest()), path, opened)


def _hashed(src, head: bytes, size: int, source: str):
    """A large log's first bytes ``head`` and the rest of ``src``: (an outcome saying why it is
    not a log, or None; the sha256 of all its bytes, read as a stream)."""
    reason = not_a_log(head, size)
    if reason is not None:
        return Outcome(source, not_log=reason), None
    digest = hashlib.sha256(head)
    while chunk := src.read(1 << 20):
        digest.update(chunk)
    return None, digest


def _diagnose_large(outcome: Outcome, path: str, opened) -> Outcome:
    """A log too large to read into memory, parsed around its trouble (``opened``: the spool
    a compressed log was decompressed into, else the file is opened where it lies)."""
    from tracelens import engine
    from tracelens.read.scan import InputError

    source = outcome.source
    if _known(outcome.log_hash or ""):
        if opened is not None:
            opened[0].close()
        outcome.already = True
        return outcome
    try:
        rep = engine.report(engine.parse_path(path, opened), _state["rules"])
        return _prepare(outcome, rep)
    except InputError as exc:
        return _failed(outcome, shown(str(exc)))
    except OSError as exc:
        return _failed(outcome, f"{source}: cannot read ({exc.strerror or exc})")
    except Exception as exc:  # noqa: BLE001 (a log that breaks the analysis: the others still go in)
        return _failed(outcome, f"{source}: could not be diagnosed ({type(exc).__name__}: {exc})")
