"""Batch ingest: one bad file never stops a run, and running it again counts nothing twice."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tracelens.cli import main
from tracelens.incidents.store import Store

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
OOM = ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log"


def _counts(db: Path) -> tuple[int, int]:
    """(occurrences, sum of incident counts)."""
    store = Store(db)
    occ = store.db["occurrences"].count
    total = sum(r.count for r in store.incidents(limit=10_000))
    store.close()
    return occ, total


def _bad_name(folder: Path) -> Path:
    return Path(os.fsdecode(bytes(folder) + b"/crash-\xff\xfe.log"))


@pytest.mark.parametrize("bad", ["non-utf8-name", "analysis-crash"])
def test_one_bad_file_is_reported_and_the_rest_go_in(tmp_path, capsys, monkeypatch, bad):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SEED, logs / "a.log")
    shutil.copy(OOM, logs / "c.log")
    if bad == "non-utf8-name":
        _bad_name(logs).write_text(SEED.read_text() + "one more line\n")
    elif bad == "analysis-crash":
        (logs / "b.log").write_text(SEED.read_text() + "one more line\n")
        from tracelens import engine

        real = engine.report

        def crash_on_b(doc, rules=None):
            if doc.source.endswith("b.log"):
                raise RecursionError("maximum recursion depth exceeded")
            return real(doc, rules)

        monkeypatch.setattr(engine, "report", crash_on_b)
    db = tmp_path / "incidents.db"
    code = main(["ingest", "--db", str(db), str(logs)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "internal error" not in captured.err
    occ, _ = _counts(db)
    if bad == "non-utf8-name":
        assert occ == 3  # the oddly named log goes in too, its name shown with escapes
        store = Store(db)
        sources = {row[0] for row in store.db.execute("SELECT source FROM occurrences")}
        assert any("\\xff" in s for s in sources)
    else:
        assert occ == 2 and "skipped" in captured.err and "b.log" in captured.err


@pytest.mark.parametrize(
    "runs,extra,expected",
    [
        (3, [], 1),
        (3, ["--recount"], 3),
        (1, [], 1),
    ],
)
def test_ingesting_the_same_log_again_counts_it_once(tmp_path, capsys, runs, extra, expected):
    db = tmp_path / "incidents.db"
    copy = tmp_path / "renamed.log"
    shutil.copy(SEED, copy)
    for k in range(runs):
        # the same content under another name counts as the same log too
        assert main(["ingest", "--db", str(db), *extra, str(SEED if k % 2 == 0 else copy)]) == 0
    assert _counts(db) == (expected, expected)
    if runs > 1 and not extra:
        assert "1 already ingested" in capsys.readouterr().out


def test_interrupted_ingest_rerun_counts_only_the_rest(tmp_path):
    logs = sorted((ROOT / "corpus" / "captured" / "gpu").glob("*.log"))[:8]
    first, everything = tmp_path / "first.db", tmp_path / "all.db"
    assert main(["ingest", "--db", str(everything), *map(str, logs)]) == 0
    assert main(["ingest", "--db", str(first), *map(str, logs[:3])]) == 0  # stopped after three
    assert main(["ingest", "--db", str(first), *map(str, logs)]) == 0  # run again in full
    assert _counts(first) == _counts(everything)
