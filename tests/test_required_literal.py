"""The literal every match of a rule's regex holds (tracelens.rulebook.required): what it is
for a table of patterns, and that it is in every text the regex matches."""

from __future__ import annotations

import pytest
from tiers import sample

from tracelens.regex import compile_regex
from tracelens.rulebook.load import default_rules, load
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


ANY_LITERALS = [
    # (pattern, literals one of which every match holds, or None)
    ("CUDA out of memory", ["CUDA out of memory"]),
    (r"OutOfMemoryError|CUDA out of memory", ["OutOfMemoryError", "CUDA out of memory"]),
    (r"(Reason|reason):\s*OOMKilled|\bOOMKilled\b.*137", ["OOMKilled"]),
    (r"Killed|\d+", None),  # a branch without a literal: nothing known
    (r"(?i)abc|def", None),
    (r"(?:abc|def)+ghi", ["ghi"]),
    (r"[[:alpha:]]+x|yyy", None),
]


@pytest.mark.parametrize("pattern,literals", ANY_LITERALS, ids=[p for p, _ in ANY_LITERALS])
def test_required_any(pattern, literals):
    from tracelens.rulebook.required import required_any

    assert required_any(pattern) == literals


@pytest.mark.parametrize(
    "text",
    ["x OutOfMemoryError y", "CUDA out of memory.", "reason: OOMKilled", "OOMKilled (137)"],
)
def test_one_of_the_literals_is_in_every_text_the_alternation_matches(text):
    from tracelens.rulebook.required import required_any

    for pattern in (ANY_LITERALS[1][0], ANY_LITERALS[2][0]):
        literals = required_any(pattern)
        assert literals is not None
        if compile_regex(pattern).search(text) is not None:
            assert any(lit in text for lit in literals)


def _rule(match: dict, needs: list | None = None):
    from tracelens.rulebook.model import Rule, adapter

    body = {
        "id": "test/derived",
        "title": "t",
        "category": "config-invalid",
        "severity": "error",
        "root_cause": "r",
        "match": match,
        "remedies": [{"title": "a"}],
        "references": ["https://example.org"],
    }
    if needs is not None:
        body["needs"] = needs
    return adapter(Rule).validate_python(body)


DERIVED = [
    # (match, needs derived for a rule that declares none)
    (
        {"any": [{"line": "Out of memory: Killed"}, {"line": r"oom-kill|OOMKilled"}]},
        [["OOMKilled", "Out of memory: Killed", "oom-kill"]],
    ),
    (
        {"all": [{"line": "Engine core died"}, {"fact": {"vllm_version": "*"}}]},
        [["Engine core died"]],
    ),
    (
        {"all": [{"line": "aaa failed"}], "any": [{"line": "bbb"}, {"exception": {"type": "X"}}]},
        [["aaa failed"]],
    ),  # an exception in 'any' gives no literal: the group is left out
    (
        {
            "any": [
                {"all": [{"fact": {"x": "*"}}, {"line": "ccc"}]},
                {"line": {"text": "ddd", "level": "ERROR"}},
            ]
        },
        [["ccc", "ddd"]],
    ),
    ({"any": [{"line": "eee"}], "none": [{"line": "fff"}]}, [["eee"]]),
    ({"any": [{"exception": {"type": "ValueError"}}]}, []),
    ({"all": [{"line": {"stream": "rank0"}}]}, []),
]


@pytest.mark.parametrize("match,needs", DERIVED, ids=[str(m) for m, _ in DERIVED])
def test_needs_are_derived_from_line_conditions_only(match, needs):
    from tracelens.rulebook.required import derived_needs, rule_needs

    rule = _rule(match)
    assert derived_needs(rule.match) == needs
    assert rule_needs(rule) == needs
    assert rule_needs(_rule(match, needs=["declared"])) == ["declared"]  # declared ones win


def test_a_rule_with_derived_needs_fires_as_before_and_is_skipped_without_them(tmp_path):
    from tracelens.engine import diagnose

    rules_dir = tmp_path / "rules"
    rules_dir.mkdir()
    (rules_dir / "test").mkdir()
    (rules_dir / "test" / "derived-needs.yaml").write_text(
        "id: test/derived-needs\ntitle: t\ncategory: host-oom\nseverity: fatal\n"
        "root_cause: r\nremedies: [{title: a}]\nreferences: [https://example.org]\nmatch:\n  any:\n    - line: 'Out of memory: Killed process \\d+'\n"
        "    - line: 'oom-kill:constraint=\\w+|OOMKilled'\n"
    )
    rs = load([rules_dir])
    assert rs.rules[0].needs == [
        ["OOMKilled", "Out of memory: Killed process ", "oom-kill:constraint="]
    ]
    fired = diagnose("kernel: Out of memory: Killed process 4242 (python)\n", rules=rs)
    assert [d.rule_id for d in fired.diagnoses] == ["test/derived-needs"]
    assert rs.prefilter.candidates("nothing of the sort here") == []


@pytest.mark.parametrize(
    "message,needs",
    [
        (r"No space left on device", [["No space left on device"]]),
        (
            r"DataLoader worker \(pid\(?s?\)? ?(?P<pid>\d+)\)? is killed",
            [["DataLoader worker (pid"]],
        ),
        (r"Can't load tokenizer for '(?P<m>[^']+)'", []),  # a quote: a repr may escape it
        (r"(?P<m>.+)", []),
    ],
)
def test_an_exception_gives_its_message_literal_when_no_escaping_changes_it(message, needs):
    from tracelens.rulebook.required import derived_needs

    rule = _rule({"any": [{"exception": {"type": "OSError", "message": message}}]})
    assert derived_needs(rule.match) == needs


def test_every_corpus_log_a_rule_with_derived_needs_fires_on_holds_them():
    """Derived needs only skip rules that could not fire: over the corpus and every example,
    each firing of such a rule is on a log holding them."""
    from pathlib import Path

    from tracelens.engine import parse
    from tracelens.rulebook.context import Context
    from tracelens.rulebook.required import derived_needs

    rules = default_rules()
    derived = [(lr, derived_needs(lr.rule.match)) for lr in rules.rules if not lr.rule.needs]
    derived = [(lr, groups) for lr, groups in derived if groups]
    assert derived
    root = Path(__file__).resolve().parent.parent
    logs = sample(
        sorted(root.glob("corpus/*/*.log")) + [p for lr, _ in derived for p in lr.examples]
    )
    fired, missing = 0, []
    for path in logs:
        ctx = Context(parse(path.read_bytes()))
        for lr, groups in derived:
            if lr.matcher(ctx) is not None:
                fired += 1
                if not all(any(lit in ctx.text for lit in grp) for grp in groups):
                    missing.append((lr.id, path.name))
    assert fired >= 5  # a few in the quick tier's sample, 541 under --full
    assert missing == []
