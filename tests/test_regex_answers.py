"""The shortcuts that answer "does this regex match?" without a match object give what the
plain ``rx.search`` gives (tables of cases, each checked against the plain way)."""

from __future__ import annotations

import pytest

from tracelens.regex import compile_regex, found
from tracelens.rulebook.origin import Wrappers

SEARCHES = [
    # (pattern, text)
    (r"OutOfMemoryError", "torch.OutOfMemoryError"),
    (r"OutOfMemoryError", "RuntimeError"),
    (r"^ValueError$", "ValueError"),
    (r"^ValueError$", "xValueError"),
    (r"(?i)cuda error: (?P<what>.+)", "CUDA Error: an illegal memory access"),
    (r"(?i)cuda error: (?P<what>.+)", "no such thing"),
    (r"\bé+\b", "café é"),  # non-ASCII: byte offsets differ from character offsets
    (r"\bé+\b", "café"),
    (r"x*", ""),  # an empty match is a match
    (r"a", ""),
    (r"bad", "bad \udcff byte"),  # a lone surrogate: RE2 cannot read it, the plain path answers
    (r"good", "bad \udcff byte"),
    (r"\d{3,}", "rank 12 of 1024"),
]


def _plain(pattern: str, text: str) -> bool | None:
    try:
        return compile_regex(pattern).search(text) is not None
    except UnicodeEncodeError:
        return None


@pytest.mark.parametrize(("pattern", "text"), SEARCHES)
def test_found_is_search(pattern: str, text: str) -> None:
    want = _plain(pattern, text)
    if want is None:  # the plain search raises: so does the shortcut, the same way
        with pytest.raises(UnicodeEncodeError):
            found(compile_regex(pattern), text)
    else:
        assert found(compile_regex(pattern), text) is want


@pytest.mark.parametrize(("pattern", "text"), SEARCHES)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_search_is_the_bindings(pattern: str, text: str, as_bytes: bool) -> None:
    """A compiled regex answers a miss itself; every answer is the binding's own search."""
    import re2

    if as_bytes:
        pattern_b, text_b = pattern.encode(), text.encode("utf-8", "surrogateescape")
        rx, base = compile_regex(pattern_b), re2.compile(pattern_b)
        want, got = base.search(text_b), rx.search(text_b)
    else:
        rx, base = compile_regex(pattern), re2.compile(pattern)
        try:
            want = base.search(text)
        except UnicodeEncodeError:
            with pytest.raises(UnicodeEncodeError):
                rx.search(text)
            return
        got = rx.search(text)
    assert type(rx) is not type(base)  # the shortcut is in use
    assert (got is None) is (want is None)
    if want is not None:
        assert (got.span(), got.groups()) == (want.span(), want.groups())


PAIRS = [
    (None, "Connection closed by remote peer"),
    (None, r"Call to (recv from|send to) \S+ failed : "),
    (None, r"(?i)engine ?core failed"),  # no literal: the regex decides
    ("RuntimeError", "NCCL error"),
]
LINES = [
    "NCCL WARN Connection closed by remote peer 10.0.0.2<5101>",
    "Call to recv from 10.0.0.2 failed : Connection reset",
    "Call to recv from  failed : ",
    "EngineCore failed to start",
    "enginecore FAILED",
    "NCCL error in the middle",  # only the type-and-message pair has it: not a line wrapper
    "nothing here",
    "",
]


@pytest.mark.parametrize("text", LINES)
def test_wrapper_line_is_the_plain_loop(text: str) -> None:
    plain = any(
        m is not None and t is None and compile_regex(m).search(text) is not None for t, m in PAIRS
    )
    assert Wrappers(PAIRS).line(text) is plain


@pytest.mark.parametrize("pairs", [PAIRS, [], [(None, "died unexpectedly")]])
def test_wrappers_made_once_per_rule_set(pairs) -> None:
    import weakref

    from tracelens.rulebook.load import RuleSet
    from tracelens.rulebook.rank import _WRAPPERS, _wrappers

    def ruleset() -> RuleSet:
        rs = RuleSet([])
        rs.wrappers = list(pairs)
        return rs

    first = ruleset()
    made = _wrappers(first)
    assert made.pairs == Wrappers(pairs).pairs
    assert _wrappers(first) is made
    second = ruleset()  # another rule set (a reloaded one): made anew
    assert _wrappers(second) is not made
    assert first in _WRAPPERS and second in _WRAPPERS
    gone = weakref.ref(first)
    del first, made
    # the cache holds neither the rule set nor anything that refers to it: reference counting
    # alone frees it (no full collection needed), and its entry goes with it
    assert gone() is None
    assert second in _WRAPPERS


@pytest.mark.parametrize(
    "lines",
    [[], [1], [1, 2, 3], [1, 1, 2, 2, 2, 5], [3, 3, 3], [1, 2, 2, 1]],  # JSON lines share a line
)
def test_first_record_of_each_line(lines: list[int]) -> None:
    from tracelens.models import Document, Record
    from tracelens.rulebook.origin import _index

    doc = Document(records=[Record(line=n, text=str(k)) for k, n in enumerate(lines)])
    plain = {rec.line: k for k, rec in reversed(list(enumerate(doc.records)))}
    assert list(_index(doc).items()) == list(plain.items())
