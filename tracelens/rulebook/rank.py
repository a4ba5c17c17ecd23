"""document -> diagnoses: evaluate the rules that pass the prefilter, rank them, fill their text.

Ranking: a primary cause outranks a secondary symptom; a rule whose conditions say more
(exception + frames + facts) outranks a generic one.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tracelens.models import Diagnosis, Document, Evidence, Fact, Remedy
from tracelens.parse.document import _segments
from tracelens.rulebook.conditions import Context, _short, compile_condition
from tracelens.rulebook.facttest import _clean_version
from tracelens.rulebook.load import RuleSet
from tracelens.rulebook.model import Rule
from tracelens.rulebook.placeholders import _PLACEHOLDER, fill


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
            from tracelens.parse.lifecycle import stop_requested_line

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
