"""Logs built to hit one stage's worst case: the work stays linear in the log's size and
nothing crashes (the figures, before and after, are in benchmarks/README.md)."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples
from worklimit import guard

from tracelens import facts
from tracelens.engine import diagnose, parse
from tracelens.models import to_dict
from tracelens.parse import traceback as tb_module
from tracelens.parse.lexer import _tok
from tracelens.read import prescan, scan

# --- scan: one search per line, however many triggers it holds ------------------------------


class CountingRegex:
    """The scan's trigger regex, counting the matches the scan looks at."""

    def __init__(self, regex):
        self.regex = regex
        self.matches = 0

    def search(self, *args):
        m = self.regex.search(*args)
        self.matches += m is not None
        return m

    def finditer(self, *args):
        for m in self.regex.finditer(*args):
            self.matches += 1
            yield m


def _reader(data: bytes):
    fp = io.BytesIO(data)

    def read_at(off: int, n: int) -> tuple[bytes, int]:
        fp.seek(off)
        return fp.read(n), 0

    return read_at


@pytest.mark.parametrize(
    "line,kinds",
    [
        pytest.param(b"ERROR " * 50_000 + b"\n", [2], id="error-words"),
        pytest.param(b"backend " * 50_000 + b"\n", [3], id="fact-words"),
        pytest.param(
            b"Traceback (most recent call last): " * 20_000 + b"\n", [1], id="traceback-headers"
        ),
        # an error line that ends in a traceback header: a second hit, with a traceback's context
        pytest.param(
            b"ERROR " * 50_000 + b"Traceback (most recent call last):\n",
            [2, 1],
            id="error-then-header",
        ),
    ],
)
def test_scan_looks_at_a_line_of_many_triggers_a_bounded_number_of_times(monkeypatch, line, kinds):
    counting = CountingRegex(scan.SCANSET.triggers)
    monkeypatch.setattr(scan.SCANSET, "_triggers", counting)
    data = line * 3
    first, last, newlines = prescan.scan_range(scan.SCANSET, _reader(data), 0, len(data))
    hits = first + last
    assert [(ln, kind) for _off, ln, kind in hits] == [(n, k) for n in (1, 2, 3) for k in kinds]
    assert newlines == 3
    assert counting.matches <= 2 * 3  # at most two matches looked at per line


# --- document, traceback parser: linear in tracebacks and frames -----------------------------


@pytest.mark.slow  # 50,000 headers or frames (tests/tiers.py)
def test_many_traceback_headers_parse_in_linear_time():
    with (
        guard()
    ):  # 50,000 headers: 1-2 s now, minutes before (each line checked against every traceback)
        doc = parse("Traceback (most recent call last):\n" * 50_000)
    (tb,) = doc.tracebacks  # the same (cut-off) traceback, folded
    assert len(tb.lines) == 50_000


@pytest.mark.slow  # 50,000 headers or frames (tests/tiers.py)
def test_parser_grows_a_repetition_in_place():
    """200,000 frames in one traceback: each reduction of ``entry*`` appends to the list it
    has, instead of copying it (0.5 s now, minutes before)."""
    n = 200_000
    toks = [_tok("TB_HEAD", "Traceback (most recent call last):", 1)]
    toks += [_tok("FRAME", f'  File "a.py", line {k + 1}, in f', k + 2) for k in range(n)]
    toks.append(_tok("EXC", "RecursionError: too deep", n + 2))

    class Callbacks:
        frames = 0

        def __getattr__(self, name):
            def build(children):
                if name == "segment":
                    Callbacks.frames = len(children) - 2
                return name

            return build

    with guard():
        tb_module._parse(iter(toks), Callbacks())
    assert Callbacks.frames == n


def test_deep_traceback_keeps_every_frame():
    frame = '  File "/srv/app/recurse.py", line {k}, in f\n    return f(n - 1)\n'
    text = "Traceback (most recent call last):\n"
    text += "".join(frame.format(k=k) for k in range(1, 20_001))
    text += "RecursionError: maximum recursion depth exceeded\n"
    (tb,) = parse(text).tracebacks
    assert [f.lineno for f in tb.frames] == list(range(1, 20_001))


# --- facts: RE2 or a linear scan, whatever the payload ---------------------------------------

PAYLOADS = [
    "AttentionSelectorConfig(" + "a" * 200_000 + ")",
    "AttentionSelectorConfig(" + "x=" * 100_000 + ")",
    "args: Namespace(" + "a" * 200_000 + ")",
    "args: Namespace(" + "x=" * 100_000 + ")",
    "args: Namespace(" + "x='" * 70_000 + ")",
    "server_args=ServerArgs(" + "a" * 200_000 + ")",
    "server_args=ServerArgs(" + "k=v)" * 50_000,
    "Initializing a V1 LLM engine (v0.11.0) with config: " + "a, " * 70_000,
    "non-default args: {" + "'a': 'b', " * 20_000,
    "Reasons: {" * 20_000,
    "Reasons: {" + "ABC" * 70_000,
    "GPU 0: NVIDIA " + " " * 200_000 + "x",
    "vllm serve " + "--tp " * 50_000,
]


@pytest.mark.parametrize("line", PAYLOADS, ids=[p[:24] + "..." for p in PAYLOADS])
def test_fact_payloads_are_read_in_linear_time(line):
    with guard():  # milliseconds now; 200 KB took over a minute before
        found, _payloads = facts.extract(parse(line).records)
    assert isinstance(found, list)


def test_every_fact_regex_is_re2():
    """Compiled by RE2 (tracelens.regex may hand out a subclass of the binding's class), never
    by Python's backtracking re."""
    for ex in facts.EXTRACTORS:
        kinds = [cls.__module__ for cls in type(ex.pattern).__mro__]
        assert any(k.startswith("re2") for k in kinds), ex.source
        assert not isinstance(ex.pattern, re.Pattern), ex.source


# the regex the key=value reader replaces: same meaning, quadratic on a long value
_KV_REGEX = re.compile(
    r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,]*?)(?=, \w+=|\)?$|\)\.?\s)"
)


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", "b_", "=", ",", "'", '"', ")", " ", ".", "\\", "1", ", x=", ") ", ")."]
        ),
        max_size=16,
    ).map("".join)
)
def test_key_values_read_like_the_regex(text):
    assert facts._kv_pairs(text) == _KV_REGEX.findall(text)


@pytest.mark.parametrize(
    "text,pairs",
    [
        ("model='/m, x', tp=4, q=None) more", [("model", "'/m, x'"), ("tp", "4"), ("q", "None")]),
        ("a=1) b=2, c=3", [("a", "1"), ("b", "2"), ("c", "3")]),
        ('s="x\\"y", n=2)', [("s", '"x\\"y"'), ("n", "2")]),
        ("a=, b=", [("a", ""), ("b", "")]),
        ("no pairs here", []),
    ],
)
def test_key_values(text, pairs):
    assert facts._kv_pairs(text) == pairs


# --- nesting: bounded depth, no RecursionError anywhere --------------------------------------


def _depth(tracebacks) -> int:
    return max(
        (
            1 + _depth(seg.exception.nested)
            for tb in tracebacks
            for seg in tb.segments
            if seg.exception
        ),
        default=0,
    )


PAIR = '  File "/srv/app/main.py", line 3, in <module>\nImportError: cannot import name x\n'


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Traceback (most recent call last):\n" + PAIR * 100, id="header-then-pairs"),
        pytest.param(
            '  File "/srv/a.py", line 1, in <module>\n' + PAIR * 100, id="pairs-without-header"
        ),
        pytest.param(
            "RemoteTraceback: \n" + '"""\nTraceback (most recent call last):\n' * 100,
            id="quoted-headers",
        ),
    ],
)
def test_repeated_frame_and_error_pairs_nest_a_bounded_depth(text):
    rep = diagnose(text)
    assert _depth(rep.document.tracebacks) <= tb_module.MAX_NESTING + 1
    assert json.loads(json.dumps(to_dict(rep)))["diagnoses"] is not None


def test_to_dict_has_no_depth_limit():
    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    out = to_dict(deep)
    for _ in range(100_000):
        out = out[0]
    assert out == []
