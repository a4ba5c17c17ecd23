"""The incident list's and the rules browser's filter: every word must match, over titles,
categories, rules and messages; the incident list finds what the CLI's ``--search`` finds."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Input
from tui_fixtures import LOGS, ROOT, make_store, own_config  # noqa: F401 (autouse)

from tracelens.cli import cli
from tracelens.tui import make_app
from tracelens.tui.filtering import WordIndex, words

TEXTS = [
    "No MLA attention backend accepts an FP8 KV cache (kv_cache_dtype=fp8_e4m3)",
    "VLLM_USE_FLASHINFER_MOE_FP8=1 picked a FlashInfer FP8 MoE kernel",
    "NCCL could not create its shared-memory segment in /dev/shm",
    "Worker processes ran out of shared memory (/dev/shm)",
    "CUDA out of memory. Tried to allocate 2.00 GiB",
]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("/dev/shm", ["dev", "shm"]),
        ("kv_cache_dtype=fp8_e4m3", ["kv", "cache", "dtype", "fp8", "e4m3"]),
        ("GPU-OOM", ["gpu", "oom"]),
    ],
)
def test_words_split_as_the_full_text_index_does(text, expected):
    assert words(text) == expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("fp8", [0, 1]),
        ("fp8 kv", [0]),  # every word must match: was 0 rows with a whole-string fuzzy score
        ("kv fp8", [0]),  # in any order
        ("shm", [2, 3]),
        ("shared mem", [2, 3]),  # a word it begins matches (the list narrows as you type)
        ("memroy", [2, 3, 4]),  # one typo in a long word
        ("flashinfer nccl", []),
        ("FP8  KV ", [0]),  # case and spaces do not matter
        ("", [0, 1, 2, 3, 4]),
        ("…", [0, 1, 2, 3, 4]),  # no word: no filter
    ],
)
def test_every_word_must_match(query, expected):
    assert WordIndex(TEXTS).search(query) == expected


SEARCH_LOGS = LOGS + sorted(
    p
    for p in (ROOT / "corpus" / "incidents").glob("*.log")
    if any(w in p.name for w in ("shm", "fp8", "nccl-nvls"))
)


@pytest.fixture(scope="module")
def search_db(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("search") / "incidents.db", SEARCH_LOGS)


def cli_ids(db, query: str) -> set[int]:
    out = CliRunner().invoke(
        cli,
        ["incidents", "list", "--db", str(db), "--search", query, "--format", "json"],
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.output
    return {row["id"] for row in json.loads(out.output)}


def tui_ids(db, query: str) -> set[int]:
    shown: list[int] = []

    async def go():
        app = make_app(db_path=db)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("slash")
            app.screen.query_one("#filter", Input).value = query
            await pilot.pause()
            shown.extend(app.screen.shown)
            assert app.screen.query_one(DataTable).row_count == len(shown)

    asyncio.run(go())
    return set(shown)


@pytest.mark.parametrize(
    "query, same",
    [
        ("shm", True),  # the case: 3 in the list, 5 with --search
        ("fp8 kv", True),  # was 0 in the list
        ("fp8", True),
        ("shared memory", True),
        ("nvls", True),
        ("nccl", True),
        ("insufficient", False),  # the list also matches the category shm-insufficient
        ("flash", False),  # and words it begins (flashinfer)
    ],
)
def test_the_list_finds_what_the_cli_search_finds(search_db, query, same):
    cli_found, tui_found = cli_ids(search_db, query), tui_ids(search_db, query)
    assert cli_found, "the case must match something"
    if same:
        assert tui_found == cli_found
    else:  # the list searches categories and word beginnings too
        assert tui_found > cli_found


@pytest.mark.parametrize(
    "query, first",
    [
        ("mla fp8", "vllm/attention/mla-fp8-kv-unsupported"),
        ("nccl timeout", "nccl/watchdog-timeout"),
        ("oom gpu", "torch/gpu-oom"),
    ],
)
def test_rules_browser_filters_by_every_word(tmp_path, query, first):
    found: list = []

    async def go():
        app = make_app(db_path=tmp_path / "none.db")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("r")
            await pilot.pause()
            await pilot.press(*query)  # no `/` first: the search box has the keys
            await pilot.pause()
            screen = app.screen
            found.extend(
                screen.rules[int(str(k.value))].rule for k in screen.query_one(DataTable).rows
            )

    asyncio.run(go())
    assert first in [r.id for r in found]
    for r in found:
        have = words(f"{r.id} {r.title} {r.category}")
        assert all(any(h.startswith(w) for h in have) for w in words(query)), r.id


@pytest.mark.parametrize("background", [False, True])
def test_a_large_store_is_indexed_in_the_background(search_db, monkeypatch, background):
    """From INDEX_IN_BACKGROUND incidents on, the first keystroke starts the index in a
    thread; the list says so, then shows the same rows as a small store does at once."""
    import threading

    import tracelens.tui.screens.incidents as screen_module

    monkeypatch.setattr(screen_module, "INDEX_IN_BACKGROUND", 0 if background else 10**9)
    release = threading.Event()  # the index waits until the test has read "indexing…"

    def held_index(texts):
        if background:
            release.wait(30)
        return WordIndex(texts)

    monkeypatch.setattr(screen_module, "WordIndex", held_index)
    seen: dict = {}

    async def go():
        app = make_app(db_path=search_db)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            screen = app.screen
            await pilot.press("slash", *"shm")
            seen["first"] = str(screen.query_one("#count").render())
            release.set()
            for _ in range(200):  # the thread's result arrives as a message
                if screen._index is not None:
                    break
                await pilot.pause(0.05)
            await pilot.pause()
            seen["shown"] = set(screen.shown)
            seen["count"] = str(screen.query_one("#count").render())

    asyncio.run(go())
    assert ("indexing…" in seen["first"]) == background
    assert seen["shown"] == cli_ids(search_db, "shm")
    assert "indexing" not in seen["count"]
