"""Ingest over many logs: the same store, summary and results whatever the number of
processes; files that are not logs listed and skipped; one transaction; one-line errors for
what is not installed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from tiers import one_quick

from tracelens.cli import main
from tracelens.incidents.store import Store, StoreError

ROOT = Path(__file__).resolve().parent.parent
CAPTURED = sorted((ROOT / "corpus" / "captured" / "gpu").glob("*.log"))[:10]
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
ENV_REPORT = ROOT / "corpus" / "healthy" / "torch-collect-env-nvidia-smi.log"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def _store_state(db: Path) -> list[tuple]:
    store = Store(db)
    rows = store.db.execute(
        "SELECT i.fingerprint, i.title, i.count, o.source, o.fingerprint_fine, o.log_hash "
        "FROM incidents i JOIN occurrences o ON o.incident_id = i.id ORDER BY o.id"
    ).fetchall()
    store.close()
    return rows


def _fleet(tmp_path: Path) -> Path:
    """A folder of logs, and what a log folder also holds."""
    logs = tmp_path / "logs"
    (logs / "node-1").mkdir(parents=True)
    for k, f in enumerate(CAPTURED):
        shutil.copy(f, logs / ("node-1" if k % 2 else ".") / f.name)
    shutil.copy(SEED, logs / "node-1" / "stdout")  # a log without an extension
    shutil.copy(SEED, logs / "again.out")  # the same log twice: counted once
    shutil.copy(ENV_REPORT, logs / "ENV.txt")
    (logs / "requirements.txt").write_text("torch==2.5.1\nvllm>=0.6.3\n")
    (logs / "empty.log").write_bytes(b"")
    (logs / "screenshot.txt").write_bytes(PNG)
    (logs / "notes.md").write_text("# not searched: not a log's name\n")
    (logs / ".hidden.log").write_text("Killed\n")
    return logs


NOT_LOGS = {
    "ENV.txt": "a PyTorch environment report (collect_env output)",
    "requirements.txt": "a requirements list (package==version lines)",
    "empty.log": "empty",
    "screenshot.txt": "a PNG image",
}


@pytest.mark.parametrize("jobs", one_quick(["1", "2", "3"], keep=1))
def test_any_number_of_processes_gives_the_same_store_and_output(tmp_path, capsys, jobs):
    logs = _fleet(tmp_path)
    one = tmp_path / "one.db"
    assert main(["ingest", "--jobs", "1", "--db", str(one), str(logs)]) == 0
    expected = capsys.readouterr()
    db = tmp_path / "many.db"
    assert main(["ingest", "--jobs", jobs, "--db", str(db), str(logs)]) == 0
    got = capsys.readouterr()
    assert _store_state(db) == _store_state(one)
    assert got.out.replace(str(db), "DB") == expected.out.replace(str(one), "DB")
    assert got.err == expected.err


@pytest.mark.parametrize("name,reason", one_quick(sorted(NOT_LOGS.items())))
def test_files_that_are_not_logs_are_listed_with_what_they_are(tmp_path, capsys, name, reason):
    logs = _fleet(tmp_path)
    assert main(["ingest", "--db", str(tmp_path / "i.db"), str(logs)]) == 0
    out, err = capsys.readouterr()
    assert f"tracelens: skipped {logs / name}: not a log ({reason})" in err.splitlines()
    assert f"; {len(NOT_LOGS)} file(s) not a log" in out
    assert ".hidden.log" not in err + out and "notes.md" not in err


def test_the_summary_counts_every_log(tmp_path, capsys):
    logs = _fleet(tmp_path)
    assert main(["ingest", "--db", str(tmp_path / "i.db"), str(logs)]) == 0
    out = capsys.readouterr().out
    counted = len(CAPTURED) + 2  # the captured logs, stdout and again.out
    assert out.startswith(f"{counted} log(s): ")
    assert ", 1 already ingested," in out  # again.out: the same bytes as node-1/stdout


def test_a_failing_write_stores_nothing(tmp_path, capsys, monkeypatch):
    logs = _fleet(tmp_path)
    db = tmp_path / "i.db"
    calls = []
    real = Store.record

    def fail_third(self, **fields):
        calls.append(1)
        if len(calls) == 3:
            raise StoreError(f"{db}: cannot write (disk I/O error)")
        return real(self, **fields)

    monkeypatch.setattr(Store, "record", fail_third)
    assert main(["ingest", "--jobs", "2", "--db", str(db), str(logs)]) == 2
    assert "disk I/O error" in capsys.readouterr().err
    assert _store_state(db) == []  # one transaction: the first two were rolled back too


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_results_have_one_row_per_log(tmp_path, capsys, jobs):
    pytest.importorskip("pyarrow")
    from tracelens.fleet.results import COLUMNS, read_rows

    logs = _fleet(tmp_path)
    out = tmp_path / "runs.parquet"
    args = ["ingest", "--db", str(tmp_path / "i.db"), "--results", str(out), str(logs)]
    assert main([*args, "--jobs", jobs]) == 0
    rows = read_rows(str(out))
    assert [set(r) for r in rows[:1]] == [{name for name, _ in COLUMNS}]
    sources = [r["source"] for r in rows]
    assert len(rows) == len(CAPTURED) + 2 and sources == sorted(sources)
    assert {r["verdict"] for r in rows} <= {"failed", "warnings", "healthy"}
    seed = next(r for r in rows if r["source"].endswith("stdout"))
    assert seed["rule"] == "vllm/attention/mla-fp8-kv-unsupported" and seed["fingerprint"]
    assert '"compute_capability"' in seed["facts"]
    assert f"{len(rows)} row(s) in {out}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,missing,needle",
    [
        (["--results", "x.parquet"], "pyarrow", "--results needs pyarrow: pip install"),
        (["--ray"], "ray", "--ray needs the ray extra: pip install 'tracelens[ray]'"),
        (["--ray", "ray://head:10001"], "ray", "pip install 'tracelens[ray]'"),
    ],
)
def test_a_missing_extra_is_one_line(tmp_path, capsys, monkeypatch, args, missing, needle):
    monkeypatch.setitem(sys.modules, missing, None)  # import fails as when not installed
    db = tmp_path / "i.db"
    assert main(["ingest", str(SEED), "--db", str(db), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert not db.exists()  # nothing started


@pytest.mark.parametrize("value", ["logs/", "/var/log/vllm", "crash.log"])
def test_a_path_after_ray_is_not_taken_for_an_address(tmp_path, capsys, value):
    assert main(["ingest", str(SEED), "--db", str(tmp_path / "i.db"), "--ray", value]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a Ray address" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("url,package", [("s3://bucket/logs/", "s3fs"), ("gs://b/l/", "gcsfs")])
def test_object_storage_without_its_package_names_it(url, package):
    pytest.importorskip("fsspec")
    try:
        __import__(package)
        pytest.skip(f"{package} is installed")
    except ImportError:
        pass
    from tracelens.fleet.raydata import FleetError, filesystem

    with pytest.raises(FleetError, match=f"needs {package}: pip install {package}$"):
        filesystem(url)


@pytest.mark.parametrize("url", ["s3://bucket/logs/", "gs://bucket/run-1/rank0.log"])
def test_object_storage_without_ray_is_one_line(tmp_path, capsys, url):
    assert main(["ingest", url, "--db", str(tmp_path / "i.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{url}: object storage is read on Ray: add --ray" in err and len(err.splitlines()) == 1


def test_a_pipe_is_read_as_a_stream(tmp_path, capsys):
    import os
    import threading

    r, w = os.pipe()
    feed = threading.Thread(target=lambda: (os.write(w, SEED.read_bytes()), os.close(w)))
    feed.start()
    try:
        assert main(["ingest", f"/dev/fd/{r}", "--db", str(tmp_path / "i.db")]) == 0
    finally:
        feed.join()
        os.close(r)
    assert "1 log(s): 1 new incident(s)" in capsys.readouterr().out
