"""The literal every match of a rule's regex holds (tracelens.rulebook.required): what it is
for a table of patterns, and that it is in every text the regex matches."""

from __future__ import annotations

import pytest
from tiers import sample

from tracelens.regex import compile_regex
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.model import ExceptionCond, FrameCond, LineCond
from tracelens.rulebook.required import required_literal, reused_literal

LITERALS = [
    # (pattern, literal or None)
    ("CUDA out of memory", "CUDA out of memory"),
    (
        r"NCCL WARN .*Connection closed by remote peer (?P<peer>\S+)",
        "Connection closed by remote peer ",
    ),
    (r"ab(?P<x>cd)ef\.g", "abcdef.g"),
    (r"(?:Tried to allocate) (?P<n>[\d.]+ [GM]iB)", "Tried to allocate "),
    (r"^\s*exitcode\s*:\s*-9\b", "exitcode"),
    (r"(?m)^Aborted!$", "Aborted!"),
    (r"(?s)expected .*found", "expected "),
    # nothing known: case folded, alternatives, repeats, RE2-only syntax
    (r"(?i)out of memory", None),
    (r"a(?i:bcdef)g", None),
    (r"OutOfMemoryError|CUDA out of memory", None),
    (r"(?:abc)+", None),
    (r"(?:abcd)?x", None),
    (r"[[:alpha:]]+ failed", None),
    (r"\Qa.b\E failed", None),
    (r"\pL+ failed", None),
    (r"x{,3}", None),
    (r"ab", None),
    (r"(unbalanced", None),
]


@pytest.mark.parametrize("pattern,literal", LITERALS, ids=[p for p, _ in LITERALS])
def test_required_literal(pattern, literal):
    assert required_literal(pattern) == literal


MATCHES = [
    # (pattern, a text it matches): the literal is in the text
    (
        r"NCCL WARN .*Connection closed by remote peer (?P<peer>\S+)",
        "NCCL WARN x Connection closed by remote peer 10.0.0.1",
    ),
    (r"(?m)^Aborted!$", "x\nAborted!\ny"),
    (r"ab(?P<x>cd)ef\.g", "zzabcdef.gzz"),
    (r"déjà (?P<v>\w+) vu", "c'est déjà xx vu"),
    (r"x{,3}y", "x{,3}y"),
]


@pytest.mark.parametrize("pattern,text", MATCHES, ids=[p for p, _ in MATCHES])
def test_the_literal_is_in_every_text_the_regex_matches(pattern, text):
    assert compile_regex(pattern).search(text) is not None
    literal = required_literal(pattern)
    assert literal is None or literal in text


def _patterns(cond) -> list[tuple[str, str]]:
    """(kind, pattern) of a condition and of the conditions under it."""
    if isinstance(cond, ExceptionCond):
        test = cond.exception
        return [("text", p) for p in (test.type, test.message) if p]
    if isinstance(cond, FrameCond):
        test = cond.frame
        return [("text", p) for p in (test.function, test.file, test.module) if p]
    if isinstance(cond, LineCond):
        line = cond.line if isinstance(cond.line, str) else cond.line.text
        return [("line", line)] if line else []
    if getattr(cond, "kind", None) in ("all", "any", "none"):
        return [p for c in getattr(cond, cond.kind) for p in _patterns(c)]
    return []


def test_shipped_rules_literals_are_in_their_examples_where_they_match():
    from tracelens.engine import parse
    from tracelens.rulebook.context import Context

    checked, missing = 0, []
    for lr in sample(default_rules().with_examples()):
        m = lr.rule.match
        patterns = {p for c in (*m.all, *m.any, *m.none) for p in _patterns(c)}
        ctxs = [Context(parse(path.read_bytes())) for path in lr.examples]
        texts = [s for ctx in ctxs for exc, _tb in ctx.exceptions for s in (exc.type, exc.message)]
        texts += [s for ctx in ctxs for fr in ctx.frames for s in (fr.function, fr.file, fr.module)]
        for kind, pattern in sorted(patterns):
            literal = required_literal(pattern)
            if literal is None:
                continue
            if kind == "line":
                rx = compile_regex(pattern.encode(), multiline=True)
                hay = [ctx.btext for ctx in ctxs]
                lit: str | bytes = literal.encode()
            else:
                rx, hay, lit = compile_regex(pattern), [s for s in texts if s], literal
            for text in hay:
                if rx.search(text) is not None:
                    checked += 1
                    if lit not in text:
                        missing.append((lr.id, pattern))
    assert checked > 100
    assert missing == []


@pytest.mark.parametrize(
    "pattern,literal",
    [("reused: CUDA out of memory", "reused: CUDA out of memory"), (r"reused: (?i)x", None)],
)
def test_a_literal_is_read_from_the_second_time_a_pattern_is_asked_for(pattern, literal):
    assert [reused_literal(pattern) for _ in range(3)] == [None, literal, literal]


def test_the_rule_index_holds_every_rule_regexs_literal(monkeypatch):
    # read when the index is built, so a single run has them from the first ask on (the
    # user's index, built now or before: the code that reads the literals is part of its key)
    from tracelens.rulebook import required
    from tracelens.rulebook.model import rule_regexes

    monkeypatch.setattr(required, "_known", {})
    monkeypatch.setattr(required, "_asked", set())
    rules = default_rules.__wrapped__()  # loaded now, through an index built now
    patterns = {p for lr in rules.rules for p in rule_regexes(lr.rule)}
    assert len(patterns) > 500
    assert {p: required._known.get(p, "absent") for p in patterns} == {
        p: required_literal(p) for p in patterns
    }
    with_literal = next(p for p in sorted(patterns) if required_literal(p) is not None)
    assert reused_literal(with_literal) == required_literal(with_literal)  # the first ask


@pytest.mark.parametrize(
    "pattern,literal",
    [("settled: CUDA out of memory", "settled: CUDA out of memory"), (r"settled: (?i)x", None)],
)
def test_a_literal_is_settled_when_every_later_ask_gives_it(pattern, literal):
    from tracelens.rulebook.required import settled_literal

    assert [settled_literal(pattern) for _ in range(2)] == [(None, False), (literal, True)]
    assert reused_literal(pattern) == literal


@pytest.mark.parametrize(
    "cond,texts",
    [
        ({"line": {"text": "kept: CUDA error: (?P<what>[a-z ]+)"}}, ["kept: CUDA error: bad", "x"]),
        ({"exception": {"type": "kept[A-Z]\\w*Error", "message": "kept: boom"}}, ["x"]),
        ({"frame": {"function": "kept_forward", "file": "kept/model\\.py"}}, ["x"]),
    ],
)
def test_a_condition_that_keeps_its_literals_answers_as_asking_on_every_log(cond, texts):
    # the literals are asked for on each log until settled, then kept: the same hits as a
    # condition compiled afresh for each log, which asks every time
    from tracelens import engine
    from tracelens.rulebook.conditions import compile_condition
    from tracelens.rulebook.context import Context

    logs = [
        "Traceback (most recent call last):\n"
        '  File "/src/kept/model.py", line 3, in kept_forward\n'
        "    x()\n"
        "keptValueError: kept: boom\n"
        "kept: CUDA error: bad thing\n",
        "nothing here\n",
        *texts,
    ]
    kept = compile_condition(cond)
    hits = 0
    for log in logs * 3:
        ctx = Context(engine.parse(log))
        got, plain = kept(ctx), compile_condition(cond)(ctx)
        assert (got is None) == (plain is None)
        if got is not None and plain is not None:
            assert (got.evidence, got.captures) == (plain.evidence, plain.captures)
            hits += 1
    assert hits >= 3
