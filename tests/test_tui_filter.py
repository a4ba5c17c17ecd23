"""The incident list's and the rules browser's filter: every word must match, over titles,
categories, rules and messages; the incident list finds what the CLI's ``--search`` finds."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Input
from tui_fixtures import LOGS, ROOT, make_store, own_config, own_dirs  # noqa: F401 (autouse)

from tracelens.cli import cli
from tracelens.tui import make_app
from tracelens.tui.filtering import WordIndex, words

# Pilot walks: the full suite runs them (tests/tiers.py); the snapshots stay in the quick one
pytestmark = pytest.mark.slow

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


SEARCHES = [
    ("shm", True),  # the case: 3 in the list, 5 with --search
    ("fp8 kv", True),  # was 0 in the list
    ("fp8", True),
    ("shared memory", False),  # and one typo in a long word: "share" (share_memory_ in a frame)
    ("nvls", True),
    ("nccl", True),
    ("insufficient", False),  # the list also matches the category shm-insufficient
    ("flash", False),  # and words it begins (flashinfer)
]


@pytest.fixture(scope="module")
def tui_found(search_db, tmp_path_factory) -> dict[str, tuple[set[int], int, int]]:
    """For each query of SEARCHES, typed in turn into one run's filter: the ids the list
    shows, how many, and the table's row count."""
    found: dict[str, tuple[set[int], int, int]] = {}

    async def go():
        app = make_app(db_path=search_db)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("slash")
            for query, _same in SEARCHES:
                app.screen.query_one("#filter", Input).value = query
                await pilot.pause()
                shown = list(app.screen.shown)
                rows = app.screen.query_one(DataTable).row_count
                found[query] = (set(shown), len(shown), rows)

    with own_dirs(tmp_path_factory.mktemp("config")):
        asyncio.run(go())
    return found


@pytest.mark.parametrize("query, same", SEARCHES)
def test_the_list_finds_what_the_cli_search_finds(search_db, tui_found, query, same):
    cli_found = cli_ids(search_db, query)
    tui_shown, count, rows = tui_found[query]
    assert rows == count
    assert cli_found, "the case must match something"
    if same:
        assert tui_shown == cli_found
    else:  # the list searches categories, word beginnings and one typo too
        assert tui_shown > cli_found


RULE_SEARCHES = [
    ("mla fp8", "vllm/attention/mla-fp8-kv-unsupported"),
    ("nccl timeout", "nccl/watchdog-timeout"),
    ("oom gpu", "torch/gpu-oom"),
]


@pytest.fixture(scope="module")
def rules_found(tmp_path_factory) -> dict[str, list]:
    """For each query of RULE_SEARCHES in turn in one run's rules browser (the first typed right
    after ``r``, with no ``/``: the search box has the keys): the rules listed."""
    found: dict[str, list] = {}
    base = tmp_path_factory.mktemp("rules-browser")

    async def go():
        app = make_app(db_path=base / "none.db")
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("r")
            await pilot.pause()
            for k, (query, _first) in enumerate(RULE_SEARCHES):
                if k == 0:
                    await pilot.press(*query)
                else:  # the box has shown it takes the keys: the next query at once
                    app.screen.query_one("#search", Input).value = query
                await pilot.pause()
                screen = app.screen
                found[query] = [
                    screen.rules[int(str(k.value))].rule for k in screen.query_one(DataTable).rows
                ]

    with own_dirs(base):
        asyncio.run(go())
    return found


@pytest.mark.parametrize("query, first", RULE_SEARCHES)
def test_rules_browser_filters_by_every_word(rules_found, query, first):
    found = rules_found[query]
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
