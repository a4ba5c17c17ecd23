"""The Ray path on local Ray: a few hundred corpus logs through ``ingest --ray`` give the same
rows and the same store as ``--jobs 1``. Skipped, with the reason printed, only when Ray cannot
start here."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tracelens.cli import main

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = [ROOT / "corpus" / name for name in ("incidents", "healthy", "unrecognized")]
AT_LEAST = 300

pytestmark = pytest.mark.slow  # Ray's start alone is seconds: the full suite runs it (CI)


def _skip_loudly(request, reason: str):
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"\ntests/test_fleet_ray.py skipped: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def local_ray(request):
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        _skip_loudly(request, f"Ray is not installed (pip install '.[ray]'): {exc}")
    try:
        ray.init(
            num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False
        )
    except Exception as exc:  # noqa: BLE001 (whatever keeps Ray from starting here)
        _skip_loudly(request, f"Ray cannot start: {type(exc).__name__}: {exc}")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> list[str]:
    """:data:`AT_LEAST` logs: spread evenly over the corpus's (every folder has its share), or
    all of them repeated (under other names) while the corpus has fewer. More logs would add
    time, not cases: each batch of logs goes to a Ray worker the same way."""
    corpus = sorted(str(p) for folder in FOLDERS for p in folder.glob("*.log"))
    if len(corpus) >= AT_LEAST:
        return [corpus[k * len(corpus) // AT_LEAST] for k in range(AT_LEAST)]
    out = list(corpus)
    extra = tmp_path_factory.mktemp("again")
    for k, src in enumerate(corpus * (AT_LEAST // len(corpus))):
        copy = extra / f"{k:04d}-{Path(src).name}"
        copy.write_bytes(Path(src).read_bytes())
        out.append(str(copy))
    return out[:AT_LEAST]


def _ingest(tmp_path: Path, name: str, logs: list[str], *args: str) -> tuple[list[dict], str]:
    from tracelens.fleet.results import read_rows

    out = tmp_path / f"{name}.parquet"
    db = tmp_path / f"{name}.db"
    assert main(["ingest", *logs, "--db", str(db), "--results", str(out), *args]) == 0
    return read_rows(str(out)), str(db)


def _incidents(db: str) -> list[tuple]:
    from tracelens.incidents.store import Store

    store = Store(db)
    rows = store.db.execute(
        "SELECT fingerprint, title, rule_id, count FROM incidents ORDER BY id"
    ).fetchall()
    store.close()
    return rows


def test_ray_gives_the_rows_and_store_of_one_process(local_ray, logs, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    expected, one_db = _ingest(tmp_path, "one", logs, "--jobs", "1")
    got, ray_db = _ingest(tmp_path, "ray", logs, "--ray")
    assert len(logs) >= AT_LEAST and len(got) >= AT_LEAST - 5  # environment reports skipped
    assert got == expected
    assert _incidents(ray_db) == _incidents(one_db)
    assert local_ray.is_initialized()  # a Ray it did not start is left running
