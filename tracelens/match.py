"""document -> matches: evaluate rules with evidence, rank them, render their text.

Every condition that holds records its evidence (line and text). Ranking: a primary cause
outranks a secondary symptom; a rule whose conditions say more (exception + frames + facts)
outranks a generic one.
"""

from __future__ import annotations

import bisect
import fnmatch
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import re2

from .document import _segments, iter_exceptions, iter_frames
from .models import Diagnosis, Document, Evidence, Fact, Remedy
from .rulebook import RuleSet, Rule, compile_regex

_WEIGHTS = {"exception": 3.0, "frame": 2.0, "fact": 2.0, "line": 1.0}
_MAX_EVIDENCE_PER_CONDITION = 3
_OPS = re.compile(r"^\s*(?:<=|>=|==|!=|~=|<|>)")


# --- the document, indexed for matching ----------------------------------------------------------


class Context:
    """What conditions look at, computed once per document."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.exceptions = list(iter_exceptions(doc))
        self.frames = list(iter_frames(doc))
        self.facts = doc.fact_map()
        parts: list[str] = []
        self.offsets: list[int] = []
        pos = 0
        for rec in doc.records:
            self.offsets.append(pos)
            text = _without_user_content(rec.text)
            parts.append(text)
            pos += len(text) + 1
        self.text = "\n".join(parts)
        # Line conditions search the UTF-8 bytes once encoded: RE2 reports byte offsets there.
        self.btext = self.text.encode("utf-8", "surrogatepass")
        if len(self.btext) == len(self.text):
            self.boffsets = self.offsets
        else:
            self.boffsets = []
            bpos = 0
            for part in parts:
                self.boffsets.append(bpos)
                bpos += len(part.encode("utf-8", "surrogatepass")) + 1

    def record_at(self, offset: int):
        """The record holding a byte offset of :attr:`btext`."""
        k = bisect.bisect_right(self.boffsets, offset) - 1
        return self.doc.records[max(k, 0)]


_REQUEST_LOG = ("Received request", "prompt:", "Generated response", "GenerateReqInput", "ChatCompletionRequest")


def _without_user_content(text: str) -> str:
    """A request-logging line with the user's prompt and the model's output masked: what a
    user typed is not what the software printed, whatever error text it quotes."""
    if not any(k in text for k in _REQUEST_LOG):
        return text
    from .redact import USER_CONTENT

    return USER_CONTENT(text)


# --- conditions ------------------------------------------------------------------------------------


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
_BELIEF = {"exception": 0.75, "exception+message": 0.85, "frame": 0.3, "fact": 0.3, "line": 0.45, "line+level": 0.5}


Cond = Callable[[Context], "Hit | None"]


def parse_fact_test(test: str, where: str = "fact") -> Callable[[str], bool]:
    """A fact test: comparisons (PEP 440 for versions, numbers otherwise) or a glob.

    >>> parse_fact_test(">=12.0")("12.0"), parse_fact_test("<0.17")("0.16.0rc2.dev313")
    (True, True)
    >>> parse_fact_test("fp8*")("FP8_E4M3"), parse_fact_test("!=auto")("auto")
    (True, False)
    """
    test = test.strip()
    if not _OPS.match(test):
        pattern = test.lower()
        return lambda value: fnmatch.fnmatchcase(value.lower(), pattern)
    clauses = [c.strip() for c in test.split(",") if c.strip()]
    parsed: list[tuple[str, str]] = []
    for clause in clauses:
        m = re.match(r"(<=|>=|==|!=|~=|<|>)\s*(.+)$", clause)
        if not m:
            raise ValueError(f"{where}: cannot read the test {test!r}")
        parsed.append((m.group(1), m.group(2).strip()))
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # only rules that compare versions
    from packaging.version import InvalidVersion, Version

    try:
        spec = SpecifierSet(test.replace(" ", ""), prereleases=True)
    except InvalidSpecifier:
        spec = None

    def check(value: str) -> bool:
        num = _number(value)
        if all(_number(v) is not None for _, v in parsed) and num is not None and (
            spec is None or not _looks_version(value)
        ):
            return all(_compare(num, op, _number(v)) for op, v in parsed)  # type: ignore[arg-type]
        if spec is not None:
            try:
                return Version(_clean_version(value)) in spec
            except InvalidVersion:
                pass
        if num is not None and all(_number(v) is not None for _, v in parsed):
            return all(_compare(num, op, _number(v)) for op, v in parsed)  # type: ignore[arg-type]
        return all(
            (value == v) if op == "==" else (value != v) if op == "!=" else False for op, v in parsed
        )

    return check


def _looks_version(value: str) -> bool:
    return value.count(".") >= 2 or bool(re.search(r"[a-z]", value))


def _clean_version(value: str) -> str:
    return value.strip().lstrip("v").split("+")[0] if "+" in value else value.strip().lstrip("v")


def _number(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def _compare(a: float, op: str, b: float) -> bool:
    return {
        "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b, "~=": a >= b,
    }[op]


def _short(text: str, limit: int = 400) -> str:
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _captures(m) -> dict[str, str]:
    """Named groups of a match as str (bytes patterns give bytes names and values)."""
    out: dict[str, str] = {}
    for k, v in m.groupdict().items():
        if v is None:
            continue
        key = k.decode() if isinstance(k, bytes) else k
        out[key] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
    return out


def _exception_cond(body: dict) -> Cond:
    tre = compile_regex(body["type"]) if "type" in body else None
    mre = compile_regex(body["message"]) if "message" in body else None
    weight = _WEIGHTS["exception"] if mre is not None else 2.0
    belief = _BELIEF["exception+message" if (mre is not None and tre is not None) else "exception"]
    why = "exception " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    def cond(ctx: Context) -> Hit | None:
        hit = Hit(weight=weight, beliefs=[belief])
        seen: set[int] = set()
        for exc, _tb in ctx.exceptions:
            caps: dict[str, str] = {}
            if tre is not None:
                m = tre.search(exc.type)
                if m is None:
                    continue
                caps.update(_captures(m))
            if mre is not None:
                m = mre.search(exc.message)
                if m is None:
                    continue
                caps.update(_captures(m))
            if exc.line in seen:
                continue
            seen.add(exc.line)
            text = f"{exc.type}: {exc.message}" if exc.type else exc.message
            hit.evidence.append(Evidence(line=exc.line, text=_short(text), why=why))
            for k, v in caps.items():
                hit.captures.setdefault(k, v)
            if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                break
        return hit if hit.evidence else None

    return cond


def _frame_cond(body: dict) -> Cond:
    tests = {k: compile_regex(v) for k, v in body.items()}
    why = "frame " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    def cond(ctx: Context) -> Hit | None:
        hit = Hit(weight=_WEIGHTS["frame"], beliefs=[_BELIEF["frame"]])
        seen: set[int] = set()
        for fr in ctx.frames:
            ok = True
            for key, rx in tests.items():
                val = fr.function if key == "function" else fr.file if key == "file" else fr.module
                if val is None or rx.search(val) is None:
                    ok = False
                    break
            if ok and fr.line not in seen:
                seen.add(fr.line)
                text = f'File "{fr.file}", line {fr.lineno}, in {fr.function}'
                hit.evidence.append(Evidence(line=fr.line, text=_short(text), why=why))
                if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                    break
        return hit if hit.evidence else None

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
    text_rx = compile_regex(body["text"].encode(), multiline=True) if body.get("text") else None
    level = str(body["level"]).upper() if "level" in body else None
    stream_rx = compile_regex(body["stream"]) if "stream" in body else None
    weight = _WEIGHTS["line"] + (0.5 if level else 0)
    belief = _BELIEF["line+level" if level else "line"]
    why = "line " + " ".join(f"{k}~{v!r}" for k, v in body.items())

    def ok(rec) -> bool:
        if level and (rec.level or "") != level:
            return False
        if stream_rx is not None and stream_rx.search(rec.stream) is None:
            return False
        return True

    def cond(ctx: Context) -> Hit | None:
        hit = Hit(weight=weight, beliefs=[belief])
        seen: set[int] = set()
        if text_rx is None:
            for rec in ctx.doc.records:
                if ok(rec) and rec.line not in seen:
                    seen.add(rec.line)
                    hit.evidence.append(Evidence(line=rec.line, text=_short(rec.text), why=why))
                    if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                        break
            return hit if hit.evidence else None
        for m in text_rx.finditer(ctx.btext):
            rec = ctx.record_at(_first_visible(ctx.btext, m.start(), m.end()))
            if not ok(rec) or rec.line in seen:
                continue
            seen.add(rec.line)
            hit.evidence.append(Evidence(line=rec.line, text=_short(rec.text), why=why))
            for k, v in _captures(m).items():
                hit.captures.setdefault(k, v)
            if len(hit.evidence) >= _MAX_EVIDENCE_PER_CONDITION:
                break
        return hit if hit.evidence else None

    return cond


def _fact_cond(body: dict) -> Cond:
    tests = {name: parse_fact_test(str(test)) for name, test in body.items()}
    why = "fact " + " ".join(f"{k} {v}" for k, v in body.items())

    def cond(ctx: Context) -> Hit | None:
        hit = Hit(weight=_WEIGHTS["fact"] * len(tests), beliefs=[_BELIEF["fact"]] * len(tests))
        for name, test in tests.items():
            fact: Fact | None = ctx.facts.get(name)
            if fact is None or not test(fact.value):
                return None
            hit.facts[name] = fact.value
            if fact.line:
                hit.evidence.append(Evidence(line=fact.line, text=_short(fact.text or f"{name}={fact.value}"), why=why))
        return hit

    return cond


def compile_condition(cond: dict) -> Cond:
    (kind, body), = cond.items()
    if kind == "exception":
        return _exception_cond(body)
    if kind == "frame":
        return _frame_cond(body)
    if kind == "line":
        return _line_cond(body)
    if kind == "fact":
        return _fact_cond(body)
    return _block({kind: body})


def _block(spec: dict) -> Cond:
    alls = [compile_condition(c) for c in spec.get("all", [])]
    anys = [compile_condition(c) for c in spec.get("any", [])]
    nones = [compile_condition(c) for c in spec.get("none", [])]

    def cond(ctx: Context) -> Hit | None:
        total = Hit()
        for c in alls:
            h = c(ctx)
            if h is None:
                return None
            _merge(total, h)
        if anys:
            got = False
            for c in anys:
                h = c(ctx)
                if h is not None:
                    got = True
                    _merge(total, h)
            if not got:
                return None
        for c in nones:
            if c(ctx) is not None:
                return None
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


# --- prefilter -------------------------------------------------------------------------------------


class Prefilter:
    """Which rules' ``needs`` literals all occur in a text: one RE2 set search for all rules."""

    def __init__(self, needs: list[list[str | list[str]]]):
        # each rule: a list of alternatives groups; a group holds if any literal occurs
        self.needs = [[[n] if isinstance(n, str) else list(n) for n in ns] for ns in needs]
        self.literals: list[str] = sorted({lit for ns in self.needs for grp in ns for lit in grp})
        self._index = {lit: k for k, lit in enumerate(self.literals)}
        self._set = None
        if self.literals:
            s = re2.Set.SearchSet()
            for lit in self.literals:
                s.Add(re2.escape(lit))
            s.Compile()
            self._set = s

    def present(self, text: str) -> set[str]:
        """Literals that occur in ``text``. RE2's set search reports every pattern that
        matches somewhere in one pass."""
        if self._set is None:
            return set()
        found = self._set.Match(text) or []
        return {self.literals[k] for k in found}

    def candidates(self, text: str) -> list[int]:
        present = self.present(text)
        return [
            k
            for k, ns in enumerate(self.needs)
            if all(any(lit in present for lit in grp) for grp in ns)
        ]


# --- rendering a match -------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.]*)(?:\|([^{}]*))?\}")


def fill(template: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` placeholders; an unknown one becomes its fallback (``{name|fallback}``)
    or ``<name>``.

    >>> fill("cp {model_path}/a{,.bak} {x} on {gpu|this GPU}", {"model_path": "/m"})
    'cp /m/a{,.bak} <x> on this GPU'
    """

    def one(m: re.Match[str]) -> str:
        if m.group(1) in values:
            return values[m.group(1)]
        return m.group(2) if m.group(2) is not None else f"<{m.group(1)}>"

    return _PLACEHOLDER.sub(one, template)


def _remedies(rule: Rule, values: dict[str, str], facts: dict[str, Fact], ctx: Context) -> list[Remedy]:
    out: list[Remedy] = []
    applied: list[Remedy] = []
    for spec in rule.remedies:
        if spec.when is not None and compile_condition(spec.when)(ctx) is None:
            continue  # a remedy for another setup (say, a vLLM flag in a training job)
        rem = Remedy(
            title=fill(spec.title, values),
            steps=[fill(s, values) for s in spec.steps],
            commands=[fill(c, values) for c in spec.commands],
        )
        if spec.fixed_in is not None:
            have = facts.get(f"{spec.fixed_in.package.replace('-', '_')}_version")
            if have is not None:
                from packaging.version import InvalidVersion, Version

                try:
                    if Version(_clean_version(have.value)) >= Version(spec.fixed_in.version):
                        rem.already_applied = True
                        rem.steps.insert(
                            0,
                            f"The log shows {spec.fixed_in.package} {have.value}, which already "
                            f"includes this fix ({spec.fixed_in.version}): try the other remedies first.",
                        )
                except InvalidVersion:
                    pass
        (applied if rem.already_applied else out).append(rem)
    return out + applied


def _confidence(beliefs: list[float], rule: Rule) -> float:
    """1 - the chance that every matched condition is wrong at once (treated as independent),
    lowered for symptoms and experimental rules."""
    doubt = 1.0
    for b in beliefs:
        doubt *= 1.0 - b
    conf = 1.0 - doubt
    if rule.secondary:
        conf *= 0.8
    if rule.status == "experimental":
        conf *= 0.85
    return round(min(conf, 0.99), 2)


def evaluate(doc: Document, ruleset: RuleSet) -> list[Diagnosis]:
    """All diagnoses for a document, best first."""
    ctx = Context(doc)
    haystack = ctx.text
    out: list[Diagnosis] = []
    for k in ruleset.prefilter.candidates(haystack):
        lr = ruleset.rules[k]
        hit = lr.matcher(ctx)
        if hit is None:
            continue
        rule = lr.rule
        values = {name: f.value for name, f in ctx.facts.items()}
        values.update(hit.captures)
        notes = []
        for note in rule.notes:
            nh = compile_condition(note.when)(ctx)
            if nh is not None:
                vals = dict(values, **nh.captures)
                notes.append(fill(note.text, vals))
                hit.evidence.extend(nh.evidence)
        evidence = _dedupe_evidence(hit.evidence)
        used = {m.group(1) for t in _texts(rule) for m in _PLACEHOLDER.finditer(t)}
        facts_used = {n: values[n] for n in sorted(used) if n in values}
        facts_used.update(hit.facts)
        score = hit.weight + 0.01 * len(evidence) - (100.0 if rule.secondary else 0.0)
        out.append(
            Diagnosis(
                rule_id=rule.id,
                title=fill(rule.title, values),
                category=rule.category,
                severity=rule.severity,
                confidence=_confidence(hit.beliefs, rule),
                secondary=rule.secondary,
                root_cause=" ".join(fill(rule.root_cause, values).split()),
                notes=notes,
                remedies=_remedies(rule, values, ctx.facts, ctx),
                does_not_help=[fill(t, values) for t in rule.does_not_help],
                evidence=evidence,
                references=list(rule.references),
                facts=facts_used,
                score=score,
            )
        )
    severity_rank = {"fatal": 2, "error": 1, "warning": 0}
    out.sort(key=lambda d: (-d.score, -severity_rank[d.severity], d.rule_id))
    out = _drop_restatements(out)
    if out and all(d.secondary for d in out):
        _point_at_unexplained(doc, out)
    return out


# raised by a stop or by the teardown after another failure, never the failure itself
_NOT_A_CAUSE = re.compile(
    r"(?:^|\.)(?:KeyboardInterrupt|SystemExit|CancelledError|BrokenPipeError|ConnectionResetError|GeneratorExit"
    r"|EngineDeadError|EngineGenerateError|ChildFailedError|ProcessRaisedException|ProcessExitedException)$"
)
# messages of exceptions that only report that another process failed
_WRAPPER = re.compile(
    r"Executor failed|EngineCore encountered an issue|Engine core initialization failed|"
    r"See (?:the )?(?:stack trace|root cause|error logs?) above|died unexpectedly|hit an exception"
)


def unexplained_exception(doc: Document, diags: list[Diagnosis]):
    """(exception, innermost frame) of the first exception in the log whose chain no
    diagnosis's evidence quotes, or None. Tracebacks quoted in messages count on their own, in
    print order; exceptions raised after someone asked the process to stop do not."""
    explained = {e.line for d in diags for e in d.evidence}

    seen: dict[int, bool] = {}

    def quoted(tb) -> bool:
        # the evidence quotes an exception of this chain: the chain is the symptom's own
        # (worked out once per traceback, not once per segment)
        if id(tb) not in seen:
            seen[id(tb)] = any(
                n in explained
                for s in tb.segments
                if s.exception is not None
                for n in range(s.exception.line, max(s.exception.line, s.exception.end_line) + 1)
            )
        return seen[id(tb)]

    stop = None
    for seg, tb in _segments(doc.tracebacks):
        exc = seg.exception
        if exc is None or not exc.type or _NOT_A_CAUSE.search(exc.type) or quoted(tb):
            continue
        if _WRAPPER.search(exc.message[:300]):
            continue
        if stop is None:
            from .signature import stop_requested_line

            stop = stop_requested_line(doc) or 0
        if stop and exc.line >= stop:
            continue
        return exc, (seg.frames[-1] if seg.frames else None)
    return None


def _point_at_unexplained(doc: Document, diags: list[Diagnosis]) -> None:
    """Every diagnosis is a symptom (a process died, a wrapper re-raised): name the exception
    none of them explains, which is most often the cause the symptom reports."""
    found = unexplained_exception(doc, diags)
    if found is None:
        return
    exc, frame = found
    first = exc.message.splitlines()[0] if exc.message else ""
    what = _short(f"{exc.type}: {first}" if first else exc.type, 300)
    where = f", raised in {frame.function} ({frame.file}, line {frame.lineno})" if frame and frame.function else ""
    note = (
        f"No rule recognizes the failure this symptom reports. The first exception in the log that "
        f"the evidence does not explain is at line {exc.line}: {what}{where}. That is most likely "
        "the cause: read the traceback there, and search the project's issue tracker for its message."
    )
    for d in diags:
        d.notes.insert(0, note)
        d.evidence = _dedupe_evidence(
            [*d.evidence, Evidence(line=exc.line, text=what, why="the first exception no rule explains")]
        )


def _dedupe_evidence(items: list[Evidence]) -> list[Evidence]:
    """One evidence entry per log line (the longest text, every reason), in line order."""
    by_line: dict[int, Evidence] = {}
    for e in items:
        cur = by_line.get(e.line)
        if cur is None:
            by_line[e.line] = replace(e)
            continue
        if len(e.text) > len(cur.text):
            cur.text = e.text
        if e.why and e.why not in cur.why:
            cur.why = f"{cur.why}; {e.why}" if cur.why else e.why
    return [by_line[k] for k in sorted(by_line)]


def _texts(rule: Rule) -> list[str]:
    texts = [rule.title, rule.root_cause, *rule.does_not_help, *(n.text for n in rule.notes)]
    for r in rule.remedies:
        texts += [r.title, *r.steps, *r.commands]
    return texts


def _drop_restatements(diags: list[Diagnosis]) -> list[Diagnosis]:
    """A lower-ranked diagnosis of the same category whose evidence lines all back a higher one
    says the same thing less precisely: drop it."""
    kept: list[Diagnosis] = []
    for d in diags:
        lines = {e.line for e in d.evidence}
        if any(k.category == d.category and lines <= {e.line for e in k.evidence} for k in kept):
            continue
        kept.append(d)
    return kept
