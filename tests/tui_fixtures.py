"""Deterministic stores and reports for the TUI tests."""

from __future__ import annotations

import asyncio
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


def make_store(path: Path, logs: list[Path] = LOGS) -> Path:
    store = Store(path)
    for k, log in enumerate(logs):
        rep = diagnose(log.read_bytes(), source=log.name)
        save(store, rep, Redactor(), log.name, seen_at=f"2025-06-{k + 1:02d}T10:00:00+00:00")
    store.close()
    return path


def seed_report():
    return diagnose(SEED.read_bytes(), source="the-fp8-kv-cache-wall.log")


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    """Each test its own config and data dirs: the app remembers the theme and keeps the last
    copied text there, never in the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "config"


def run(app, steps, size=(80, 24)):
    """Run ``steps(pilot, app)`` against the app in a headless terminal of ``size``."""

    async def go():
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(pilot, app)

    asyncio.run(go())


def notes(app) -> list[str]:
    """The messages the app has notified so far."""
    return [n.message for n in app._notifications]
