"""A machine that fails under tracelens (read-only or full database, a damaged page, closed or
full standard streams, numbers SQLite cannot hold) is one line on stderr and exit 2, never an
internal error."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tiers import one_quick

from tracelens.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
GPU_LOGS = ROOT / "corpus" / "captured" / "gpu"
REAL_CONNECT = sqlite3.connect


def _read_only(path, *args, **kwargs):
    return REAL_CONNECT(f"file:{path}?mode=ro", *args, uri=True, **kwargs)


def _full_disk(path, *args, **kwargs):
    conn = REAL_CONNECT(path, *args, **kwargs)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
    return conn


@pytest.fixture(scope="module")
def gpu_logs(tmp_path_factory) -> Path:
    """A folder of eight captured GPU logs: a folder goes through the pool of processes as a
    fleet's does, and eight are enough for each worker to take several."""
    folder = tmp_path_factory.mktemp("logs")
    for log in sorted(GPU_LOGS.glob("*.log"))[:8]:
        shutil.copyfile(log, folder / log.name)
    return folder


# each case ingests a folder through a pool of processes: the quick tier runs the full disk
@pytest.mark.parametrize(
    "connect,needle",
    one_quick([(_read_only, "readonly database"), (_full_disk, "disk is full")], keep=1),
)
def test_unwritable_database_is_one_line_exit_2(
    tmp_path, capsys, monkeypatch, connect, needle, gpu_logs
):
    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), str(SEED)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sqlite3, "connect", connect)
    assert main(["ingest", "--db", str(db), str(gpu_logs)]) == 2
    err = capsys.readouterr().err.replace("ingesting", "").strip()
    assert needle in err and "internal error" not in err and len(err.splitlines()) == 1


def _damage(db: Path) -> None:
    conn = REAL_CONNECT(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # the incidents table's root page: every command reads it (a page elsewhere may be one
    # that an indexed read never touches)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'incidents'").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[(root - 1) * size : root * size] = b"\xde\xad\xbe\xef" * (size // 4)
    db.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def gpu_store(tmp_path_factory, gpu_logs) -> Path:
    """A store of some captured GPU logs, ingested once for this module's tests to copy."""
    db = tmp_path_factory.mktemp("gpu") / "incidents.db"
    assert main(["ingest", "--db", str(db), str(gpu_logs)]) == 0
    return db


@pytest.mark.parametrize(
    "args",
    # the quick tier writes into the damaged store (the case that must not write); --full
    # lists and resolves too
    one_quick(
        [
            ["ingest", str(SEED)],
            ["incidents", "list"],
            ["incidents", "resolve", "1", "--note", "x"],
        ]
    ),
)
def test_damaged_database_is_refused_in_one_line(tmp_path, capsys, args, gpu_store):
    db = tmp_path / "incidents.db"
    for part in gpu_store.parent.glob(gpu_store.name + "*"):  # the database and its WAL, if any
        shutil.copyfile(part, tmp_path / part.name)
    _damage(db)
    before = db.read_bytes()
    capsys.readouterr()
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err.replace("ingesting", "").strip()
    assert "malformed" in err and "internal error" not in err and len(err.splitlines()) == 1
    assert db.read_bytes() == before  # nothing written into it


@pytest.mark.parametrize(
    "args",
    [
        ["incidents", "show", "18446744073709551616"],
        ["incidents", "resolve", "9223372036854775808"],
        ["incidents", "attach", "99999999999999999999999", "OPS-1"],
        ["ticket", "18446744073709551616"],
    ],
)
def test_incident_id_past_64_bits_is_one_line(tmp_path, capsys, args):
    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), str(SEED)]) == 0
    capsys.readouterr()
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert "internal error" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "args,redirect,needle",
    # a process each: the quick tier closes each stream once (a full one, a closed stdout, a
    # closed stdin), --full with every command
    one_quick(
        [
            (["diagnose", str(SEED)], ">/dev/full", "No space left"),
            (["rules", "list"], ">/dev/full", "No space left"),
            (["incidents", "list"], ">/dev/full", "No space left"),
            (["diagnose", str(SEED)], ">&-", "standard output is closed"),
            (["diagnose", "-"], "<&-", "no log"),
            (["tui", "-"], "<&- >/dev/null", "no log"),
        ],
        keep=(0, 3, 4),
    ),
)
def test_closed_or_full_streams_are_one_line(tmp_path, args, redirect, needle):
    db = tmp_path / "incidents.db"
    main(["ingest", "--db", str(db), str(SEED)])
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tracelens", *args])
    p = subprocess.run(
        ["bash", "-c", f"{command} {redirect}"],
        check=False,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        env={**os.environ, "TRACELENS_DB": str(db)},
    )
    err = p.stderr.decode().strip()
    assert p.returncode == 2, err
    assert (
        needle in err
        and "internal error" not in err
        and "Traceback" not in err
        and len(err.splitlines()) == 1
    )


@pytest.mark.parametrize(
    "connect,needle",
    [
        (_read_only, "readonly database"),
        (_full_disk, "disk is full"),
    ],
)
def test_tui_save_into_an_unwritable_store_is_a_toast(tmp_path, monkeypatch, connect, needle):
    import asyncio

    from tui_fixtures import seed_report

    from tracelens.tui import make_app

    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), str(GPU_LOGS / "oom-batch-too-large.log")]) == 0
    monkeypatch.setattr(sqlite3, "connect", connect)
    seen = {}

    async def go():
        app = make_app(db_path=db, report=seed_report())
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("s")
            await pilot.pause()
            seen["errors"] = [n.message for n in app._notifications if n.severity == "error"]
            seen["running"] = app.is_running

    asyncio.run(go())
    assert seen["running"] and any(needle in m for m in seen["errors"])
