"""The paths a process that reads many logs (``ingest``) takes give what a single run's paths
give: the prefilter's set engine, the rule files stat'ed once a batch (tables of cases, each
checked against the plain way)."""

from __future__ import annotations

import pytest
from test_rule_index import RULE
from test_rule_index import write as _write

from tracelens.rulebook import prefilter as prefilter_module
from tracelens.rulebook.load import load
from tracelens.rulebook.prefilter import Prefilter

NEEDS = [
    ["boom"],
    [["boom", "bang"], "x"],
    ["CUDA error: out of memory"],
    ["Größe"],
    ["a.b", "(y)"],
    [],
    ["aa"],
    ["ü"],
]

TEXTS = [
    "",
    "nothing here",
    "a boom here",
    "bang x",
    "CUDA error: out of memory",
    "die Größe",
    "a.b (y)",
    "axb (y)",
    "aaaa",
    "bad bytes \udcff\udcfe then boom and ü",
    "line one\nboom\nline three x",
]


def plain(needs: list, text: str) -> bool:
    groups = [[n] if isinstance(n, str) else n for n in needs]
    return all(any(lit in text for lit in grp) for grp in groups)


@pytest.mark.parametrize("text", TEXTS)
def test_the_prefilter_set_picks_what_the_automaton_picks(text):
    pf = Prefilter(NEEDS)
    for _ in range(prefilter_module._SET_FROM):  # the third text on is read by the set
        pf.candidates("warm up")
    assert pf._set
    expected = [k for k, ns in enumerate(NEEDS) if plain(ns, text)]
    assert pf.candidates(text) == expected
    assert pf.present(text) == {lit for lit in pf.literals if lit in text}


@pytest.mark.parametrize("text", TEXTS)
def test_a_prefilter_told_to_expect_many_texts_reads_the_first_by_its_set(text):
    pf = Prefilter(NEEDS)
    pf.expect_many()  # what a pool's parent does before it forks
    assert pf._set
    expected = [k for k, ns in enumerate(NEEDS) if plain(ns, text)]
    assert pf.candidates(text) == expected
    assert pf.present(text) == {lit for lit in pf.literals if lit in text}


def test_the_first_texts_are_read_by_the_automaton():
    pf = Prefilter(NEEDS)
    pf.candidates("boom")
    assert pf._set is None


def test_a_set_that_gave_up_is_left_for_the_automaton():
    pf = Prefilter(NEEDS)
    pf._set = lambda _data: None  # an RE2 set that ran out of memory answers no pattern at all
    assert pf.candidates("bang x boom") == [0, 1, 5]
    assert pf._set is False
    assert pf.candidates("aaaa") == [5, 6]


def test_the_set_is_not_stored_with_the_prefilter():
    import pickle

    pf = Prefilter(NEEDS)
    for _ in range(prefilter_module._SET_FROM):
        pf.candidates("boom")
    again = pickle.loads(pickle.dumps(pf))
    assert again._set is None and again._texts == 0
    assert again.candidates("a boom") == [0, 5]


def _causes(rs, text: str) -> dict[str, str]:
    return {rs.rules[k].id: rs.rules[k].rule.root_cause for k in rs.prefilter.candidates(text)}


@pytest.mark.parametrize(
    "batch,expected",
    [
        # a single run stats the files of the rules it picks on every log
        (False, {"boom": {"x/one": "second"}, "bang": {"x/other": "second"}}),
        # a batch: a rule's file once, at its first pick (x/one was picked before the edit)
        (True, {"boom": {"x/one": "first"}, "bang": {"x/other": "second"}}),
    ],
)
def test_a_batch_stats_each_rule_file_once(tmp_path, monkeypatch, batch, expected):
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "mine"
    _write(root, "x/one", "boom", "first")
    _write(root, "x/other", "bang", "first")
    old = time.time_ns() - 3600 * 10**9
    for p in [root, *root.rglob("*")]:
        os.utime(p, ns=(old, old))
    rs = load([root], every_file=False, strict=False)
    if batch:
        rs.stamp_once()
    assert _causes(rs, "boom") == {"x/one": "first"}
    for rule_id, needs in (("x/one", "boom"), ("x/other", "bang")):  # edited in place
        with open(root / f"{rule_id}.yaml", "r+") as fh:  # (the folder's stamp stays)
            fh.write(RULE.format(id=rule_id, needs=needs, cause="second"))
            fh.truncate()
    assert {text: _causes(rs, text) for text in ("boom", "bang")} == expected


def _carried_on_plain(records, after: int) -> bool:
    """The line-by-line definition: a few progress lines after ``after``, no restart first."""
    from tracelens.rulebook.progress import _ALL_PASSED, _MIN_PROGRESS, _PROGRESS, _RUN_START

    seen = 0
    for rec in records:
        if rec.line <= after:
            continue
        if _RUN_START.search(rec.text):
            return False
        if _ALL_PASSED.search(rec.text):
            return True
        if _PROGRESS.search(rec.text):
            seen += 1
            if seen >= _MIN_PROGRESS:
                return True
    return False


_OK = 'INFO: 10.0.0.1 - "POST /v1/completions HTTP/1.1" 200 OK'
CARRIED = [
    # (case, lines after the failure at line 1)
    ("three answered requests", [_OK] * 3),
    ("two", [_OK] * 2),
    ("a restart first", ["INFO vLLM API server version 0.9.0", *[_OK] * 3]),
    ("a restart after", [*[_OK] * 3, "INFO vLLM API server version 0.9.0"]),
    ("training, any case", ["Step 1 LOSS 2.0", "ITER 3: loss = 2", "epoch: [0][100/625] Loss 6.7"]),
    ("a long s and Arabic digits", ["Step 1 LOſS 2", "step ٣ loss 1", "train: [0/3] loss 2"]),
    ("loss without a step", ["loss 1", "loss 2", "loss 3"]),
    ("words in passing", ["exit", "succeeded", "exited with code 0", "moving on"]),
    ("4xx is no progress", ['"GET / HTTP/1.1" 404'] * 3),
    ("batches", ["Decode batch. #running-req: 1", "Prefill batch, x", "Decode batch. y"]),
    ("an sglang start", ["server_args=ServerArgs(x=1)", *[_OK] * 3]),
    ("non-UTF-8 bytes", ["bad \udcff " + _OK, _OK, "\udcfe" + _OK]),
    ("nothing", []),
    (
        "a pytest session that passed",
        ["x", "== 6 passed, 2 deselected, 1 warning in 191.47s (0:03:11) =="],
    ),
    ("only passed", ["=================== 12 passed in 0.41s ==================="]),
    ("skipped first", ["==== 2 skipped, 5 passed in 3.02s ===="]),
    ("a pytest session with a failure", ["==== 1 failed, 5 passed in 3.2s ===="]),
    ("a pytest session with an error", ["==== 5 passed, 1 error in 3.2s ===="]),
    ("passed in prose", ["all checks passed", "3 passed in review"]),
    ("spread over chunks", ["x", _OK, "y", "z", _OK, "w", _OK]),
    ("a restart in a later chunk", ["x", _OK, "y", "vLLM API server version 1", _OK, _OK]),
]


@pytest.mark.parametrize("lines", [c[1] for c in CARRIED], ids=[c[0] for c in CARRIED])
def test_carried_on_finds_what_the_line_by_line_check_finds(lines):
    from tracelens.models import Record
    from tracelens.rulebook.progress import carried_on

    records = [Record(line=n, text=t) for n, t in enumerate(["Traceback", *lines], 1)]
    for chunk in (1, 2, 3, 256):
        assert carried_on(records, 1, chunk) == _carried_on_plain(records, 1)
        assert carried_on(records, 0, chunk) == _carried_on_plain(records, 0)


PYTEST_SUMMARIES = [
    # (case, closing line of a pytest session, whether the run counts as carried on)
    (
        "passed, deselected, warning",
        "== 6 passed, 2 deselected, 1 warning in 191.47s (0:03:11) ==",
        True,
    ),
    ("only passed", "=================== 12 passed in 0.41s ===================", True),
    ("skipped first", "==== 2 skipped, 5 passed in 3.02s ====", True),
    ("a failure", "==== 1 failed, 5 passed in 3.2s ====", False),
    ("an error", "==== 5 passed, 1 error in 3.2s ====", False),
    ("nothing passed", "==== 3 skipped in 0.2s ====", False),
    ("not a summary", "all 5 passed in 3s", False),
]


@pytest.mark.parametrize(
    ("line", "expected"),
    [c[1:] for c in PYTEST_SUMMARIES],
    ids=[c[0] for c in PYTEST_SUMMARIES],
)
def test_a_passing_test_session_carries_on_after_the_tracebacks_its_tests_print(line, expected):
    from tracelens.models import Record
    from tracelens.rulebook.progress import carried_on

    records = [Record(line=1, text="KeyError: 'foo'"), Record(line=2, text=line)]
    assert carried_on(records, 1) is expected


STORED = [
    {"a": ["x", {"b": "y"}], "n": 3, "f": 0.5, "none": None, "t": True},
    {"text": 'Größe ⏎ 日本 \\ " \n\t', "nested": [[[]], {}]},
    {},
]


@pytest.mark.parametrize("data", STORED)
def test_a_stored_blob_reads_back_as_the_plain_json(data):
    import json
    import zlib

    from tracelens.incidents.records import encode_document, encode_report

    for encode in (encode_report, encode_document):
        assert json.loads(zlib.decompress(encode(data))) == data


@pytest.mark.parametrize("text", ["plain", 'Größe \\ " \n', "bad \udcff byte"])
def test_a_stored_excerpt_reads_back_as_the_plain_json(text):
    import json
    import zlib

    from tracelens.incidents.records import Excerpt, ExcerptLine, encode_excerpt, excerpt_dict

    ex = Excerpt(lines=[ExcerptLine(line=3, text=text, process="rank0", evidence=True)])
    assert json.loads(zlib.decompress(encode_excerpt(ex))) == excerpt_dict(ex)
