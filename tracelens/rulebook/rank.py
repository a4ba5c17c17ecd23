"""document -> diagnoses: evaluate the rules that pass the prefilter, rank them, fill their text.

Ranking: a primary cause outranks a secondary symptom; a rule whose conditions say more
(exception + frames + facts) outranks a generic one.
"""

from __future__ import annotations

import weakref
from dataclasses import replace

from tracelens.models import SEVERITY_RANK, Diagnosis, Document, Evidence, Fact, Remedy
from tracelens.pyregex import compile_re
from tracelens.rulebook.calibration import calibrate
from tracelens.rulebook.conditions import Context, compiled
from tracelens.rulebook.facttest import _clean_version
from tracelens.rulebook.hang import hung_origin
from tracelens.rulebook.load import RuleSet
from tracelens.rulebook.model import Rule, not_help_text
from tracelens.rulebook.origin import Wrappers, find_failures
from tracelens.rulebook.placeholders import NAMES, fill
from tracelens.rulebook.progress import run_span
from tracelens.rulebook.unrecognized import explains, settle


def _remedies(
    rule: Rule, values: dict[str, str], facts: dict[str, Fact], ctx: Context
) -> list[Remedy]:
    out: list[Remedy] = []
    applied: list[Remedy] = []
    for spec in rule.remedies:
        own = values
        if spec.when is not None:
            wh = compiled(spec.when)(ctx)
            if wh is None:
                continue  # a remedy for another setup (say, a vLLM flag in a training job)
            own = dict(values, **wh.captures)  # what its own condition captured, as a note's
        rem = Remedy(
            title=fill(spec.title, own),
            steps=[fill(s, own) for s in spec.steps],
            commands=[fill(c, own) for c in spec.commands],
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
        repeated = _flags_already_set(spec.commands, facts)
        if repeated and not rem.already_applied:
            rem.already_applied = True
            shown = ", ".join(f"{flag} {value}" for flag, value in repeated)
            rem.steps.insert(
                0,
                f"The log already runs with {shown}: this remedy would change nothing as written; try the others first.",
            )
        (applied if rem.already_applied else out).append(rem)
    return out + applied


_FLAG_VALUE = compile_re(
    r"(?:^|\s)--([a-z][a-z0-9-]*)(?:[ =]([^\s'\"#{}]+|'[^']*'|\"[^\"]*\"))?(?=\s|$)"
)


def _same(a: str, b: str) -> bool:
    a, b = a.strip("'\"").lower(), b.strip("'\"").lower()
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _flags_already_set(commands: list[str], facts: dict[str, Fact]) -> list[tuple[str, str]]:
    """The flags a remedy's commands set to a literal value (not a placeholder, not a bare
    switch) when the log shows every one of them already at that value; empty otherwise."""
    seen: list[tuple[str, str]] = []
    for command in commands:
        body = command.split("#", 1)[0]
        for m in _FLAG_VALUE.finditer(body):
            flag, value = m.group(1), m.group(2)
            if value is None:
                continue  # a switch, or a placeholder value: the user's own setup restated
            name = flag.replace("-", "_")
            fact = facts.get(f"{name}_arg") or facts.get(name)
            if fact is None:
                return []
            if not _same(fact.value, value):
                return []
            seen.append((f"--{flag}", value))
    return seen


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


_WRAPPERS: weakref.WeakKeyDictionary[RuleSet, Wrappers] = weakref.WeakKeyDictionary()


def _wrappers(ruleset: RuleSet) -> Wrappers:
    """The symptom wrappers of a rule set, made once per rule set (each log of a batch asked
    for the literals of every pair again) and let go with it."""
    got = _WRAPPERS.get(ruleset)
    if got is None:
        got = _WRAPPERS[ruleset] = Wrappers(ruleset.wrappers)
    return got


def evaluate(
    doc: Document, ruleset: RuleSet, exclude: frozenset[str] = frozenset()
) -> list[Diagnosis]:
    """All diagnoses for a document, best first; a failure no rule explains is named (see
    :mod:`tracelens.rulebook.unrecognized`). Rules in ``exclude`` are left out (the confidence
    calibration asks what a log gets when its own rule does not exist yet)."""
    failures = find_failures(doc, _wrappers(ruleset))
    origin = failures.origin
    if origin is None and failures.stop is not None:
        failures.hung = hung_origin(doc, failures.stop)
    if origin is not None:
        doc.focus = run_span(doc, origin.line)
        doc.failure_line = origin.line
        doc.failure_start, doc.failure_end = origin.start, origin.end
    ctx = Context(doc)
    haystack = ctx.text
    log_file = doc.source if doc.source and doc.source not in ("-", "<stdin>") else "crash.log"
    out: list[Diagnosis] = []
    for k in ruleset.prefilter.candidates(haystack):
        lr = ruleset.rules[k]
        if lr.id in exclude:
            continue
        hit = lr.matcher(ctx)
        if hit is None:
            continue
        rule = lr.rule
        values = {name: f.value for name, f in ctx.facts.items()}
        values.setdefault("log_file", log_file)
        values.update(hit.captures)
        notes = []
        for note in rule.notes:
            nh = compiled(note.when)(ctx)
            if nh is not None:
                vals = dict(values, **nh.captures)
                notes.append(fill(note.text, vals))
                hit.evidence.extend(nh.evidence)
        evidence = _dedupe_evidence(hit.evidence)
        used = {m.group(1) for t in _texts(rule) for m in NAMES.finditer(t)}
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
                degrades=rule.degrades,
                root_cause=" ".join(fill(rule.root_cause, values).split()),
                notes=notes,
                remedies=_remedies(rule, values, ctx.facts, ctx),
                does_not_help=_not_helping(rule, values, ctx),
                evidence=evidence,
                references=list(rule.references),
                facts=facts_used,
                score=score,
            )
        )
    out.sort(key=lambda d: (-d.score, -SEVERITY_RANK[d.severity], _first_line(d), d.rule_id))
    out = _drop_restatements(out)
    out = settle(doc, out, failures, lambda o: _nearest(o, ruleset, exclude))
    # a rule that explains the only failure the log shows (a container runtime's error
    # response, which reports what failed in it) explains the origin as much as any
    shown = failures.shown
    calibrate(out, bool(out) and shown is not None and explains(out[0], shown))
    return out


def _nearest(origin, ruleset: RuleSet, exclude: frozenset[str]):
    """The known failures nearest an unrecognized failure (from the nearest-failure index, less
    ``exclude``), the score from which the nearest names its category, and the category the
    words of the known failures give it; the module and its index are loaded only for such a
    failure."""
    from tracelens.rulebook.nearest import THRESHOLD, by_words, index, nearest, words_table

    known = index(ruleset)
    if exclude:
        known = [e for e in known if e.rule_id not in exclude]
        words = by_words(origin, known)
    else:
        words = by_words(origin, known, words_table(ruleset))
    return nearest(origin, known), THRESHOLD, words


def _not_helping(rule: Rule, values: dict[str, str], ctx: Context) -> list[str]:
    """The does-not-help items of ``rule``: the plain ones, and those whose ``when`` holds."""
    out = []
    for item in rule.does_not_help:
        if isinstance(item, str):
            out.append(fill(item, values))
        elif (hit := compiled(item.when)(ctx)) is not None:
            out.append(fill(item.text, dict(values, **hit.captures)))
    return out


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
    texts = [
        rule.title,
        rule.root_cause,
        *(not_help_text(t) for t in rule.does_not_help),
        *(n.text for n in rule.notes),
    ]
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


def _first_line(d: Diagnosis) -> int:
    """Where a diagnosis's evidence starts: of two rules that say as much, the one whose
    evidence comes first is nearer the failure that started it all."""
    return min((e.line for e in d.evidence), default=0)
