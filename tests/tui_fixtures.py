"""Deterministic stores and reports for the TUI tests."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import Store

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
LOGS = [
    SEED,
    ROOT / "corpus/captured/gpu/oom-batch-too-large.log",
    ROOT / "corpus/captured/gpu/nccl-duplicate-gpu.log",
    ROOT / "corpus/captured/gpu/device-assert-embedding.log",
    ROOT / "corpus/captured/vllm/serve-port-in-use.log",
    ROOT / "corpus/captured/vllm/serve-tp-not-dividing-heads.log",
]


# built once per test process, each test gets its own copy: the tests write to their store
# (resolve, attach, delete) and may change the report they are given


@functools.cache
def _store_bytes(logs: tuple[Path, ...]) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "incidents.db"
        store = Store(path)
        for k, log in enumerate(logs):
            rep = diagnose(log.read_bytes(), source=log.name)
            save(store, rep, Redactor(), log.name, seen_at=f"2025-06-{k + 1:02d}T10:00:00+00:00")
        store.close()  # the last connection closed: the WAL is checkpointed into the one file
        return path.read_bytes()


def make_store(path: Path, logs: list[Path] = LOGS) -> Path:
    """A store at ``path`` holding ``logs`` diagnosed and saved a day apart (a copy of the one
    built the first time these logs were asked for)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_store_bytes(tuple(logs)))
    return path


@functools.cache
def _seed_report():
    return diagnose(SEED.read_bytes(), source="the-fp8-kv-cache-wall.log")


def seed_report():
    """The seed log's report, diagnosed once; each call gets a deep copy."""
    return copy.deepcopy(_seed_report())


def set_own_dirs(monkeypatch: pytest.MonkeyPatch, base: Path) -> Path:
    """Config and data dirs under ``base``: the app remembers the theme and keeps the last
    copied text there, never in the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))
    return base / "config"


@contextlib.contextmanager
def own_dirs(base: Path) -> Iterator[Path]:
    """``set_own_dirs`` for a fixture wider than one test (which runs before ``own_config``)."""
    with pytest.MonkeyPatch.context() as mp:
        yield set_own_dirs(mp, base)


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    """Each test its own config and data dirs."""
    return set_own_dirs(monkeypatch, tmp_path)


def run(app, steps, size=(80, 24)):
    """Run ``steps(pilot, app)`` against the app in a headless terminal of ``size``."""

    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(pilot, app)

    asyncio.run(go())


def screen_text(app) -> str:
    """The text on the terminal now, row by row: what a screenshot shows, without drawing its
    SVG (which also writes each space as ``&#160;`` and splits the text where its style
    changes)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def notes(app) -> list[str]:
    """The messages the app has notified so far."""
    return [n.message for n in app._notifications]
