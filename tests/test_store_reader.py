"""A store is read without the store's module: ``diagnose`` with an incident store at the
current schema lists similar incidents through a plain connection (no records, JSON,
compression, sqlite-utils or OpenSSL imported); an older store is still upgraded first, a
newer or broken one still refused in one line."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from test_imports import _python

from tracelens.engine import diagnose
from tracelens.incidents.connection import SCHEMA, Reader, StoreError
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.signature import _digest
from tracelens.incidents.similar import attach_similar, open_to_read
from tracelens.incidents.store import MIGRATIONS, Store
from tracelens.rulebook.index import index_path
from tracelens.rulebook.rulefile import shipped_rules_dir

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"


@pytest.mark.parametrize("text", ["", "RuntimeError | CUDA error", "naïve ✓", "\udcff bytes"])
def test_a_fingerprint_is_the_sha256_of_its_signature(text):
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    assert _digest(text) == digest


def test_the_schema_a_reader_expects_is_the_last_migration():
    assert SCHEMA == len(MIGRATIONS)


def _store(path: Path, state: str) -> Path:
    """A store holding the seed log's incident, at the current schema, an older one (before
    the last migration), a newer one, or a file that is no database."""
    if state == "not a database":
        path.write_bytes(b"not a database at all" * 100)
        return path
    migrations = MIGRATIONS[:-1] if state == "older" else MIGRATIONS
    store = Store(path, migrations=migrations)
    if state != "older":  # saving needs the current schema
        save(store, diagnose(SEED.read_bytes()), Redactor(), "seed.log")
    if state == "newer":
        store.db.execute(f"PRAGMA user_version = {SCHEMA + 1}")
    store.close()
    return path


@pytest.mark.parametrize(
    "state, opened, error",
    [
        ("current", Reader, None),
        ("older", Store, None),
        ("newer", None, "made by a newer tracelens"),
        ("not a database", None, "cannot open the database"),
    ],
)
def test_a_store_opens_to_read(tmp_path, state, opened, error):
    path = _store(tmp_path / "incidents.db", state)
    if error:
        with pytest.raises(StoreError, match=error) as refused:
            open_to_read(path)
        with pytest.raises(StoreError) as by_the_store:
            Store(path, create=False)
        assert str(refused.value) == str(by_the_store.value)  # the store's own words
        return
    store = open_to_read(path)
    assert type(store) is opened
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA
    store.close()


@pytest.mark.parametrize("state, hits", [("current", 1), ("older", 0)])
def test_diagnose_lists_similar_incidents_from_a_store_read(tmp_path, state, hits):
    path = _store(tmp_path / "incidents.db", state)
    rep = attach_similar(diagnose(SEED.read_bytes()), path, limit=3)
    assert len(rep.similar) == hits
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA


_MODULES_OF_A_RUN = (
    "import contextlib, io, sys\n"
    "from tracelens.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()) as out: code = main(sys.argv[1:])\n"
    "print(code, 'similar' in out.getvalue().lower(), ' '.join(sorted(sys.modules)))"
)
STORE_MODULES = {
    "tracelens.incidents.store",
    "tracelens.incidents.records",
    "sqlite_utils",
    "json",
    "hashlib",  # OpenSSL: the fingerprints take SHA-256 from CPython's own module
}


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache folder of these tests' own, made warm by a first run: building the rules' index
    (what a first run does) takes checksums, and the shared cache folder may be pruned by other
    tests writing theirs at any time. It starts with the shared folder's index of the shipped
    rules (usually there), so the first run seldom has to build it."""
    cache = tmp_path_factory.mktemp("cache")
    shipped = index_path([shipped_rules_dir()])  # in the shared cache folder
    if shipped is not None:
        (cache / "tracelens").mkdir()
        try:
            shutil.copy2(shipped, cache / "tracelens" / shipped.name)
        except FileNotFoundError:  # not built yet, or pruned: the first run builds it
            pass
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TRACELENS_DB": str(cache / "none.db")}
    _python(_MODULES_OF_A_RUN, "diagnose", str(SEED), env=env)
    assert any(cache.rglob("*.*")), "the first run wrote no cache"
    return cache


@pytest.mark.parametrize(
    "state, imported, not_imported",
    [
        ("current", {"tracelens.incidents.similar", "sqlite3"}, STORE_MODULES),
        ("older", {"tracelens.incidents.store", "sqlite_utils"}, set()),  # upgraded first
    ],
)
def test_diagnose_with_a_store_imports_no_more_than_it_reads_with(
    tmp_path, warm_cache, state, imported, not_imported
):
    path = _store(tmp_path / "incidents.db", state)
    env = {**os.environ, "XDG_CACHE_HOME": str(warm_cache)}
    env["TRACELENS_DB"] = str(path)
    out = _python(_MODULES_OF_A_RUN, "diagnose", str(SEED), env=env)
    code, shown, *modules = out.stdout.split()
    assert code == "0", out.stderr
    assert shown == str(state == "current")  # the seed's own incident is listed
    assert imported <= set(modules)
    assert not (not_imported & set(modules))
