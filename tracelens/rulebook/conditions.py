"""Conditions compiled into functions of a :class:`~tracelens.rulebook.context.Context`: each
that holds records its evidence (line and text), its captures and how much it says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from tracelens.models import Evidence, Fact
from tracelens.pyregex import compile_re
from tracelens.regex import compile_regex
from tracelens.rulebook.context import Context
from tracelens.rulebook.facttest import parse_fact_test
from tracelens.rulebook.model import Condition, ExceptionCond, FactCond, FrameCond, LineCond, Rule
from tracelens.rulebook.required import required_any, settled_literal

_WEIGHTS = {"exception": 3.0, "frame": 2.0, "fact": 2.0, "line": 1.0}
_MAX_EVIDENCE_PER_CONDITION = 3


@dataclass
class Hit:
    evidence: list[Evidence] = field(default_factory=list)
    captures: dict[str, str] = field(default_factory=dict)
    weight: float = 0.0
    """How much the matched conditions say (ranks rules against each other)."""
    facts: dict[str, str] = field(default_factory=dict)
    beliefs: list[float] = field(default_factory=list)
    """For each matched condition, how sure it alone makes us (combined into confidence)."""


# How sure one matched condition makes us that the rule's failure happened.
_BELIEF = {
    "exception": 0.75,
    "exception+message": 0.85,
    "frame": 0.3,
    "fact": 0.3,
    "line": 0.45,
    "line+level": 0.5,
}


Cond = Callable[[Context], "Hit | None"]


def _short(text: str, limit: int = 400) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _captures(m) -> dict[str, str]:
    """Named groups of a match as str (bytes patterns give bytes names and values); a Windows
    path as Python's repr prints it in a message ('C:\\\\Users\\\\x', from an OSError's
    filename) with its backslashes single, as a person types it."""
    out: dict[str, str] = {}
    for k, v in m.groupdict().items():
        if v is None:
            continue
        key = k.decode() if isinstance(k, bytes) else k
        value = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        if "\\\\" in value and _REPR_WINDOWS_PATH.match(value):
            value = value.replace("\\\\", "\\")
        out[key] = value
    return out


_REPR_WINDOWS_PATH = compile_re(r"(?:[A-Za-z]:|\\\\\\\\[\w.$-]+)\\\\[^\\]")
"""A drive letter or a UNC host, then a doubled backslash: a path written by ``repr``."""


# A condition keeps its regexes as text and asks compile_regex (compiled once, then a cache
# lookup) when it searches: RE2 takes 0.1-0.4 ms to compile a rule's regex, and many are never
# searched in a run (an ``all`` stops at its first condition that fails, a message is tested
# only when the type matched, a frame's next field only when the one before matched).


class _Literals:
    """The required literals of a condition's regexes (:func:`reused_literal`), asked for on
    each log until they are settled, then kept: reading them depends on the rules alone."""

    __slots__ = ("patterns", "values", "encoded", "settled", "branches")

    def __init__(self, patterns: list[str]):
        self.patterns = patterns
        self.values: list[str | None] = [None] * len(patterns)
        self.encoded: bytes | None = None
        self.settled = not patterns
        self.branches: list[bytes] | Literal[False] | None = None
        """The first pattern's literals one of which every match holds, when it has no single
        one (:func:`required_any`): ``None`` until asked twice, ``False`` when there are none."""

    def get(self) -> list[str | None]:
        if not self.settled:
            answers = [settled_literal(p) for p in self.patterns]
            self.values = [lit for lit, _ in answers]
            self.settled = all(done for _, done in answers)
            first = self.values[0] if self.values else None
            self.encoded = first.encode() if first is not None else None
        return self.values

    def get_bytes(self) -> bytes | None:
        """The first pattern's literal as UTF-8."""
        if not self.settled:
            self.get()
        return self.encoded

    def any_bytes(self) -> list[bytes] | None:
        """For a first pattern with no single literal, its branches' (an alternation at the
        top), as UTF-8: read from the second log a process asks on (a single run does not pay
        for reading the pattern), ``None`` before and when there are none."""
        if self.branches is None:
            self.branches = False if self.get_bytes() is not None or not self.patterns else []
            return None
        if self.branches == []:
            found = required_any(self.patterns[0])
            self.branches = [lit.encode() for lit in found] if found else False
        return self.branches if self.branches else None


def _exception_cond(body: dict) -> Cond:
    tre = body.get("type")
    mre = body.get("message")
    weight = _WEIGHTS["exception"] if mre is not None else 2.0
    belief = _BELIEF["exception+message" if (mre is not None and tre is not None) else "exception"]
    why = "exception " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    lits = _Literals([p for p in (tre, mre) if p is not None])

    def cond(ctx: Context) -> Hit | None:
        hit: Hit | None = None  # made at the first exception that matches (most never do)
        seen: set[int] = set()
        got = lits.get()
        tlit = got[0] if tre is not None else None
        mlit = got[-1] if mre is not None else None
        for exc, _tb in ctx.exceptions:
            caps: dict[str, str] = {}
            if tre is not None:
                if tlit is not None and tlit not in exc.type:
                    continue
                m = ctx.search(compile_regex(tre), exc.type)
                if m is None:
                    continue
                caps.update(_captures(m))
            if mre is not None:
                if mlit is not None and mlit not in exc.message:
                    continue
                m = ctx.search(compile_regex(mre), exc.message)
                if m is None:
                    continue
                caps.update(_captures(m))
            if exc.line in seen:
                continue
            seen.add(exc.line)
            if hit is None:
                hit = Hit(weight=weight, beliefs=[belief])
            text = f"{exc.type}: {exc.message}" if exc.type else exc.message
            hit.evidence.append(Evidence(line=exc.line, text=_short(text), why=why))
            for k, v in caps.items():
                hit.captures.setdefault(k, v)
            if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                break
        return hit

    return cond


def _frame_cond(body: dict) -> Cond:
    tests = dict(body)
    why = "frame " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    keyed = _Literals(list(body.values()))

    def cond(ctx: Context) -> Hit | None:
        hit: Hit | None = None  # made at the first frame that matches (most never do)
        seen: set[int] = set()
        lits = dict(zip(body, keyed.get()))
        for fr in ctx.frames:
            ok = True
            found = []
            for key, pattern in tests.items():
                lit = lits[key]
                val = fr.function if key == "function" else fr.file if key == "file" else fr.module
                m = None
                if val is None or (lit is not None and lit not in val):
                    ok = False
                elif (m := ctx.search(compile_regex(pattern), val)) is None:
                    ok = False
                if not ok:
                    break
                found.append(m)
            if ok and fr.line not in seen:
                seen.add(fr.line)
                if hit is None:
                    hit = Hit(weight=_WEIGHTS["frame"], beliefs=[_BELIEF["frame"]])
                for m in found:  # named groups fill placeholders, as a line's or a message's do
                    for k, v in _captures(m).items():
                        hit.captures.setdefault(k, v)
                text = f'File "{fr.file}", line {fr.lineno}, in {fr.function}'
                hit.evidence.append(Evidence(line=fr.line, text=_short(text), why=why))
                if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                    break
        return hit

    return cond


def _first_visible(data: bytes, start: int, end: int) -> int:
    """Offset of the match's first non-whitespace byte (a pattern such as ``^\\s*X`` may start
    on the blank line above X)."""
    k = start
    while k < end and data[k] in b" \t\r\n":
        k += 1
    return k if k < end else start


def _line_cond(body: Any) -> Cond:
    if isinstance(body, str):
        body = {"text": body}
    text_rx = body["text"].encode() if body.get("text") else None
    level = str(body["level"]).upper() if "level" in body else None
    stream_rx = body.get("stream")
    least = int(body.get("count") or 1)  # lines that must match
    weight = _WEIGHTS["line"] + (0.5 if level else 0)
    belief = _BELIEF["line+level" if level else "line"]
    why = "line " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    def ok(rec) -> bool:
        if level and (rec.level or "") != level:
            return False
        if stream_rx is not None and compile_regex(stream_rx).search(rec.stream) is None:
            return False
        return True

    text_lit = _Literals([body["text"]] if text_rx is not None else [])

    def cond(ctx: Context) -> Hit | None:
        blit = text_lit.get_bytes()
        if blit is not None and blit not in ctx.btext:
            return None  # no line can match
        if blit is None and text_rx is not None:
            branches = text_lit.any_bytes()
            if branches is not None and not any(b in ctx.btext for b in branches):
                return None  # no branch of the alternation can match
        hit = Hit(weight=weight, beliefs=[belief])
        seen: set[int] = set()
        enough = max(least, _MAX_EVIDENCE_PER_CONDITION)  # lines to look for at most
        if text_rx is None:
            for rec in ctx.doc.records:
                if ok(rec) and rec.line not in seen:
                    seen.add(rec.line)
                    if len(hit.evidence) < _MAX_EVIDENCE_PER_CONDITION:
                        hit.evidence.append(Evidence(line=rec.line, text=_short(rec.text), why=why))
                    if len(seen) >= enough:
                        break
            return hit if len(seen) >= least else None
        for m in compile_regex(text_rx, multiline=True).finditer(ctx.btext):
            rec = ctx.record_at(_first_visible(ctx.btext, m.start(), m.end()))
            if not ok(rec) or rec.line in seen:
                continue
            seen.add(rec.line)
            if len(hit.evidence) < _MAX_EVIDENCE_PER_CONDITION:
                hit.evidence.append(Evidence(line=rec.line, text=_short(rec.text), why=why))
            for k, v in _captures(m).items():
                hit.captures.setdefault(k, v)
            if len(seen) >= enough:
                break
        return hit if len(seen) >= least else None

    return cond


def _fact_cond(body: dict) -> Cond:
    # each test is read when a log first holds its fact (a version test imports packaging,
    # which most runs never need); the rule's validation has read them all already
    tests: dict[str, Callable[[str], bool] | None] = dict.fromkeys(body)
    why = "fact " + " ".join(f"{k} {v}" for k, v in body.items())

    def cond(ctx: Context) -> Hit | None:
        hit = Hit(weight=_WEIGHTS["fact"] * len(tests), beliefs=[_BELIEF["fact"]] * len(tests))
        for name, test in tests.items():
            fact: Fact | None = ctx.facts.get(name)
            if fact is None:
                return None
            if test is None:
                test = tests[name] = parse_fact_test(str(body[name]))
            if not test(fact.value):
                return None
            hit.facts[name] = fact.value
            if fact.line:
                hit.evidence.append(
                    Evidence(
                        line=fact.line, text=_short(fact.text or f"{name}={fact.value}"), why=why
                    )
                )
        return hit

    return cond


def _fields(test: Any, keys: tuple[str, ...]) -> dict[str, str]:
    return {k: v for k in keys if (v := getattr(test, k)) is not None}


def compile_condition(cond: Any) -> Cond:
    """One compiler per condition type (see :mod:`tracelens.rulebook.model`); a mapping as
    written in YAML is validated into its type first."""
    if isinstance(cond, dict):
        from tracelens.models import adapter

        cond = adapter(Condition).validate_python(cond)
    if isinstance(cond, ExceptionCond):
        return _exception_cond(_fields(cond.exception, ("type", "message")))
    if isinstance(cond, FrameCond):
        return _frame_cond(_fields(cond.frame, ("function", "file", "module")))
    if isinstance(cond, LineCond):
        return _line_cond(
            cond.line
            if isinstance(cond.line, str)
            else _fields(cond.line, ("text", "level", "stream", "count"))
        )
    if isinstance(cond, FactCond):
        return _fact_cond(cond.fact)
    return _block({cond.kind: getattr(cond, cond.kind)})


_COMPILED: dict[int, tuple[Any, Cond]] = {}


def compiled(cond: Any) -> Cond:
    """:func:`compile_condition`, once per condition object: a rule's notes and remedies are
    tested again on every log the rule fires on."""
    got = _COMPILED.get(id(cond))
    if got is None or got[0] is not cond:  # the object held keeps its id from being reused
        got = _COMPILED[id(cond)] = (cond, compile_condition(cond))
    return got[1]


_COST = {"fact": 0, "exception": 1, "line": 2, "frame": 3}
"""How much a condition of each kind costs to say no, least first: a fact is a lookup, an
exception test reads the log's few exceptions, a line regex reads the whole text, a frame test
every frame of every traceback."""


def _cost(cond: Any) -> int:
    """A validated condition's cost (a block's: its costliest condition's)."""
    if cond.kind in _COST:
        return _COST[cond.kind]
    return max(map(_cost, getattr(cond, cond.kind)), default=0)


def _block(spec: dict) -> Cond:
    alls = [compile_condition(c) for c in spec.get("all", [])]
    anys = [compile_condition(c) for c in spec.get("any", [])]
    nones = [compile_condition(c) for c in spec.get("none", [])]
    # the 'any' conditions first when they cost less to say no than the 'all' ones (a rule of
    # exception types whose 'all' reads every frame): the same answer, the same hits in order
    any_first = bool(anys and alls) and max(map(_cost, spec.get("any", []))) < max(
        map(_cost, spec.get("all", []))
    )

    def held_any(ctx: Context) -> list[Hit] | None:
        got = [h for c in anys if (h := c(ctx)) is not None]
        return got if got else None

    def cond(ctx: Context) -> Hit | None:
        any_hits: list[Hit] | None = []
        if anys and any_first:
            any_hits = held_any(ctx)
            if any_hits is None:
                return None
        hits: list[Hit] = []  # merged once the block holds (most fail at their first condition)
        for c in alls:
            h = c(ctx)
            if h is None:
                return None
            hits.append(h)
        if anys and not any_first:
            any_hits = held_any(ctx)
            if any_hits is None:
                return None
        for c in nones:
            if c(ctx) is not None:
                return None
        total = Hit()
        for h in (*hits, *(any_hits or ())):
            _merge(total, h)
        return total

    return cond


def _merge(into: Hit, h: Hit) -> None:
    into.evidence.extend(h.evidence)
    into.weight += h.weight
    into.beliefs.extend(h.beliefs)
    for k, v in h.captures.items():
        into.captures.setdefault(k, v)
    into.facts.update(h.facts)


def compile_rule(rule: Rule) -> Cond:
    m = rule.match
    return _block({"all": m.all, "any": m.any, "none": m.none})
