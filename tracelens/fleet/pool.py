"""Many logs on one machine: the files under the paths given, diagnosed on a process pool (or
in this process), and the outcomes merged into the incident store in one transaction by the
one process that writes it."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tracelens.fleet.work import Outcome, Settings, diagnose_path, preload, setup, shown
from tracelens.incidents.store import Recorded, Store

LOG_SUFFIXES = (".log", ".txt", ".out", ".err", "")
"""File name endings searched for in a folder (no ending: ``stdout``, ``rank0``); the content
decides whether each is a log."""
_PACKED = (".gz", ".bz2", ".xz", ".zst")
"""Endings of compressed files, looked through for the name's own ending."""


def _log_name(name: str) -> bool:
    """Whether a file of this name is searched for in a folder: a log ending, also behind a
    rotation number and a compression ending (``job.log.1``, ``rank0.log.gz``,
    ``job.log.2.gz``).

    >>> [n for n in ("a.log", "a.log.1.gz", "stdout.xz", "a.json", "a.json.gz") if _log_name(n)]
    ['a.log', 'a.log.1.gz', 'stdout.xz']
    """
    if name.startswith("."):
        return False
    stem, suffix = os.path.splitext(name.lower())
    if suffix in _PACKED:
        stem, suffix = os.path.splitext(stem)
    if suffix[1:].isdigit():  # a rotated log
        stem, suffix = os.path.splitext(stem)
    return suffix in LOG_SUFFIXES


def log_files(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """The files to ingest (folders searched, hidden files and folders left out, sorted), and
    the paths given that do not exist (reported, not fatal)."""
    files: list[str] = []
    missing: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = []
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in names:
                    if _log_name(name):
                        found.append(os.path.join(root, name))
            files += sorted(f for f in found if os.path.isfile(f))
        elif path.exists():
            files.append(str(p))
        else:
            missing.append(f"{shown(p)}: no such file or directory")
    return files, missing


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _context():
    import multiprocessing

    # fork: the workers start at once with the rules the parent loaded; elsewhere (macOS,
    # Windows) each worker loads them (from the rule cache)
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return multiprocessing.get_context(method)


class Outcomes(Iterator[Outcome]):
    """The outcomes of a pool already at work, in the order of its files: the workers start
    when this is made (the caller opens and checks the store meanwhile); :meth:`close` stops
    what has not started and waits for the workers (also when the caller stops early)."""

    def __init__(self, pool, results: Iterator[Outcome], forked: bool):
        self._pool, self._results, self._forked = pool, results, forked

    def __next__(self) -> Outcome:
        try:
            return next(self._results)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            if self._forked:
                gc.unfreeze()


def _one_by_one(files: list[str], settings: Settings) -> Iterator[Outcome]:
    setup(settings)
    yield from map(diagnose_path, files)


def diagnose_all(files: list[str], settings: Settings, jobs: int) -> Iterator[Outcome]:
    """Each file's outcome, in the order of ``files``; ``jobs`` processes (1: this one, as
    the outcomes are read). A pool starts at once: close the result (``close()``) when its
    outcomes are not all read."""
    jobs = max(1, min(jobs, len(files)))
    if jobs == 1:
        return _one_by_one(files, settings)
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, min(16, len(files) // (jobs * 8)))
    context = _context()
    forked = context.get_start_method() == "fork"
    if forked:
        preload(settings)  # made once here, inherited by every worker
        # what the workers inherit is left out of their garbage collections (which would
        # otherwise walk it, and copy the pages they touch): the collector's advice for fork
        gc.freeze()
    pool = None
    try:
        pool = ProcessPoolExecutor(
            jobs, mp_context=context, initializer=setup, initargs=(settings,)
        )
        # every chunk is submitted now: the workers start before this returns
        return Outcomes(pool, pool.map(diagnose_path, files, chunksize=chunk), forked)
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if forked:
            gc.unfreeze()
        raise


@dataclass
class Tally:
    """What an ingest did, for its summary."""

    new: int = 0
    repeat: int = 0
    healthy: int = 0
    already: int = 0
    skipped: list[str] = field(default_factory=list)
    """Files that could not be read or diagnosed, each with why."""
    not_logs: list[str] = field(default_factory=list)
    """Files that are not logs, each with what it is."""


class _Joined:
    """The store, as seen by writes inside :func:`one_transaction`: each joins the one
    transaction already open instead of opening its own."""

    def __init__(self, store: Store):
        self._store = store

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    @contextmanager
    def _write(self) -> Iterator[None]:
        yield

    def record(self, **fields) -> Recorded:
        return Store.record(self, **fields)  # type: ignore[arg-type]


@contextmanager
def one_transaction(store: Store) -> Iterator[_Joined]:
    """``store`` with every ``record`` made through it inside one transaction: all stored,
    or none (a failure rolls everything back)."""
    with store._write():
        yield _Joined(store)


def merge(
    store: Store,
    outcomes: Iterable[Outcome],
    recount: bool = False,
    seen: Callable[[Outcome], None] | None = None,
) -> Tally:
    """Store the outcomes (in one transaction) and count what became of each."""
    tally = Tally()
    with one_transaction(store) as batch:
        for out in outcomes:
            if seen is not None:
                seen(out)
            if out.not_log is not None:
                tally.not_logs.append(f"{out.source}: not a log ({out.not_log})")
            elif out.skipped is not None:
                tally.skipped.append(out.skipped)
            elif out.already:
                tally.already += 1
            elif out.record is None:
                tally.healthy += 1
            else:
                rec = batch.record(**out.record, log_hash=out.log_hash, recount=recount)
                if rec.duplicate:
                    tally.already += 1
                elif rec.new:
                    tally.new += 1
                else:
                    tally.repeat += 1
    return tally
