"""The set engines of a process that reads many texts (tracelens.literals): Hyperscan's literal
mode says which literals occur and where exactly as a plain substring search does, and the
prefilter and the fact triggers give the same answers on it, on RE2 and on their automatons."""

from __future__ import annotations

import pytest
from test_batch_paths import NEEDS, TEXTS, plain

from tracelens import facts, literals
from tracelens.read.logread import records_from_text
from tracelens.rulebook import prefilter as prefilter_module
from tracelens.rulebook.prefilter import Prefilter

HAS_HYPERSCAN = literals.hyperscan_usable()
ENGINES = [
    pytest.param(
        "hyperscan",
        marks=pytest.mark.skipif(not HAS_HYPERSCAN, reason="hyperscan does not import here"),
    ),
    "re2",
]
WORDS = ["boom", "bang", "oo", "Größe", "ü", "a.b", "(y)", "\n", "x\ny", "aaa"]


def _engine(monkeypatch, engine: str) -> None:
    monkeypatch.setenv("TRACELENS_SCAN_ENGINE", "" if engine == "hyperscan" else "re2")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _occurrences(text: str) -> list[tuple[int, int]]:
    """Every (end byte, literal index), found the plain way."""
    data, out = _utf8(text), []
    for k, word in enumerate(WORDS):
        w = _utf8(word)
        start = data.find(w)
        while start != -1:
            out.append((start + len(w), k))
            start = data.find(w, start + 1)
    return sorted(out)


@pytest.mark.skipif(not HAS_HYPERSCAN, reason="hyperscan does not import here")
@pytest.mark.parametrize("text", [*TEXTS, "aaaaa", "Größe Größe ü", "x\ny boom"])
def test_hyperscan_finds_what_a_substring_search_finds(text, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TRACELENS_SCAN_ENGINE", raising=False)
    present = literals.present_finder(WORDS)
    occurrences = literals.occurrence_finder(WORDS)
    assert present is not None and occurrences is not None
    assert present(_utf8(text)) == {k for k, w in enumerate(WORDS) if w in text}
    assert sorted(occurrences(_utf8(text))) == _occurrences(text)


def test_on_re2_or_without_hyperscan_there_is_no_finder(monkeypatch):
    import sys

    monkeypatch.setenv("TRACELENS_SCAN_ENGINE", "re2")
    assert literals.present_finder(WORDS) is None
    assert literals.occurrence_finder(WORDS) is None
    monkeypatch.delenv("TRACELENS_SCAN_ENGINE")
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # import fails
    assert literals.present_finder(["other", "words"]) is None


@pytest.mark.skipif(not HAS_HYPERSCAN, reason="hyperscan does not import here")
def test_an_empty_literal_leaves_the_set_to_the_caller(monkeypatch):
    monkeypatch.delenv("TRACELENS_SCAN_ENGINE", raising=False)
    assert literals.present_finder(["boom", ""]) is None
    assert literals.present_finder([]) is None


@pytest.mark.skipif(not HAS_HYPERSCAN, reason="hyperscan does not import here")
def test_a_second_process_loads_the_database_from_the_cache(monkeypatch, tmp_path):
    import hyperscan

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TRACELENS_SCAN_ENGINE", raising=False)
    words = ["cached", "words"]
    assert literals.present_finder(words) is not None
    (path,) = (tmp_path / "tracelens").glob("literals-*.hsdb")
    monkeypatch.setattr(literals, "_FINDERS", {})  # a new process

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the database")

    monkeypatch.setattr(hyperscan, "Database", no_compile)
    present = literals.present_finder(words)
    assert present is not None and present(b"some words") == {1}
    path.write_bytes(b"not a database")  # a bad cache file is built again
    monkeypatch.setattr(literals, "_FINDERS", {})
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    present = literals.present_finder(words)
    assert present is not None and present(b"cached") == {0}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text", TEXTS)
def test_the_prefilter_picks_the_same_rules_on_each_engine(engine, text, monkeypatch):
    _engine(monkeypatch, engine)
    pf = Prefilter(NEEDS)
    for _ in range(prefilter_module._SET_FROM):  # the third text on is read by the set
        pf.candidates("warm up")
    assert pf._set
    assert pf.candidates(text) == [k for k, ns in enumerate(NEEDS) if plain(ns, text)]
    assert pf.present(text) == {lit for lit in pf.literals if lit in text}


LOG = """\
INFO 01-20 13:03:40 [api_server.py:1] vLLM API server version 0.16.0
PyTorch version: 2.9.1+cu128
CUDA used to build PyTorch: 12.8
GPU 0: NVIDIA H200 (größe ü) Driver Version: 570.86.15
NCCL version 2.27.3+cuda12.9
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 1.2 GiB is free.
bad bytes \ufffd then NCCL version 2.21.5
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_the_fact_triggers_give_the_same_facts_on_each_engine(engine, monkeypatch):
    _engine(monkeypatch, engine)
    records = records_from_text(LOG, 1)
    monkeypatch.setattr(facts, "_texts", 0)  # the automaton
    first = facts._with_triggers(records)
    assert any("NCCL version" in found for _rec, found in first)
    facts._occurrences.cache_clear()
    monkeypatch.setattr(facts, "_texts", facts._MANY_FROM)  # the set engine, if there is one
    assert [(r.line, f) for r, f in facts._with_triggers(records)] == [
        (r.line, f) for r, f in first
    ]
    monkeypatch.setattr(facts, "_texts", 0)
    automaton_facts = facts.extract(records)
    monkeypatch.setattr(facts, "_texts", facts._MANY_FROM)
    assert facts.extract(records) == automaton_facts
    facts._occurrences.cache_clear()
