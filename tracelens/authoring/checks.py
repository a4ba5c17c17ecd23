"""``rules lint`` and ``rules test``: the knowledge base checks itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tracelens.authoring.transforms import TRANSFORMS
from tracelens.engine import parse, parse_path, report
from tracelens.models import ERROR_LEVEL
from tracelens.rulebook.load import RuleSet
from tracelens.rulebook.model import not_help_text
from tracelens.rulebook.unrecognized import RULE_ID as UNRECOGNIZED


@dataclass
class Result:
    name: str
    ok: bool
    detail: str = ""


_FLAG = r"(?:^|[^\w./-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*)"
_ENV = r"\b((?:[A-Z][A-Z0-9]*_)+[A-Z0-9]+)=|\b((?:NCCL|VLLM|SGLANG|CUDA|PYTORCH|TORCH|TORCHINDUCTOR|HF|HUGGING_FACE|TRANSFORMERS|RAY|GLOO|NVIDIA|TRITON|OMP|MASTER|FLASHINFER|XLA|PJRT|HIP|ROCR|HSA|ACCELERATE|DS|CUBLAS|CUDNN|NVTE|LD|TOKENIZERS|UCX|FI)_[A-Z0-9_]*[A-Z0-9])\b"
_VERSION = r"\b\d+\.\d+(?:\.\d+)?\b"


def actionable_claims(rule) -> tuple[set[str], set[str], bool]:
    """The flags and environment variables a rule's remedies, notes and does-not-help items
    name, and whether they state a version: what its ``verified`` record must cover."""
    from tracelens.regex import compile_regex

    texts: list[str] = [not_help_text(t) for t in rule.does_not_help]
    texts += [n.text for n in rule.notes]
    for rem in rule.remedies:
        texts += [rem.title, *rem.steps, *rem.commands]
    flags: set[str] = set()
    env: set[str] = set()
    version = any(rem.fixed_in for rem in rule.remedies)
    flag_re, env_re, ver_re = compile_regex(_FLAG), compile_regex(_ENV), compile_regex(_VERSION)
    for text in texts:
        flags.update(m.group(1) for m in flag_re.finditer(text))
        env.update(m.group(1) or m.group(2) for m in env_re.finditer(text))
        version = version or ver_re.search(text) is not None
    return flags, env, version


def unverified(rule) -> list[str]:
    """The actionable claims of a rule its ``verified`` record does not mention."""
    flags, env, version = actionable_claims(rule)
    record = " ".join(f"{v.release} {v.file} {v.checked}" for v in rule.verified)
    missing = sorted(x for x in flags | env if x not in record)
    if version and not rule.verified:
        missing.append("versions")
    return missing


def lint(rs: RuleSet) -> list[str]:
    """Problems beyond schema validity: missing examples, references that are not URLs,
    flags, variables and versions not checked against released code."""
    problems: list[str] = []
    for lr in rs.rules:
        r = lr.rule
        missing = unverified(r)
        if missing:
            problems.append(
                f"{lr.path}: verified: no record of checking {', '.join(missing)} in released code"
            )
        if not lr.examples:
            problems.append(
                f"{lr.path}: examples: no example log beside the rule ({lr.path.stem}.example.log)"
            )
        for ref in r.references:
            if not ref.startswith(("https://", "http://")):
                problems.append(f"{lr.path}: references: {ref!r} is not a URL")
        if len(r.id) > ID_MAX:
            problems.append(
                f"{lr.path}: id: {len(r.id)} characters, more than {ID_MAX} (the rules browser "
                "shows an id whole on a 200-column terminal up to that)"
            )
    return problems


ID_MAX = 72
"""The longest rule id ``rules lint`` accepts."""


def _rank1(lr, rep) -> tuple[bool, list[str]]:
    got = [d.rule_id for d in rep.diagnoses]
    if lr.rule.secondary:  # a symptom's example: the failure it reports may be one no rule knows
        got = [g for g in got if g != UNRECOGNIZED] or got
    return bool(got) and got[0] == lr.rule.id, got


def why_not(lr, doc, rs: RuleSet) -> str:
    """Why a rule did not fire on a document: the ``needs`` literals missing, or the
    conditions that did not hold."""
    from tracelens.rulebook.conditions import compile_condition
    from tracelens.rulebook.context import Context

    ctx = Context(doc)
    present = rs.prefilter.present(ctx.text)
    missing = [
        grp
        for grp in ([n] if isinstance(n, str) else list(n) for n in lr.rule.needs)
        if not any(lit in present for lit in grp)
    ]
    if missing:
        return "needs literal(s) not in the log: " + ", ".join(
            " or ".join(repr(x) for x in grp) for grp in missing
        )
    m = lr.rule.match
    failed = [f"all[{k}] {c}" for k, c in enumerate(m.all) if compile_condition(c)(ctx) is None]
    if m.any and all(compile_condition(c)(ctx) is None for c in m.any):
        failed.append(f"no condition of 'any' held ({len(m.any)})")
    failed += [
        f"none[{k}] held: {c}"
        for k, c in enumerate(m.none)
        if compile_condition(c)(ctx) is not None
    ]
    return "; ".join(failed) if failed else "every condition held"


def check_example(lr, ex: Path, rs: RuleSet, transforms: bool = True) -> list[Result]:
    """One example log: its rule at rank 1, and (with ``transforms``) under every envelope."""
    doc = parse_path(str(ex))
    ok, got = _rank1(lr, report(doc, rs))
    name = f"{lr.rule.id} <- {ex.name}"
    if not ok:
        detail = f"rank 1 is {got[0] if got else 'nothing'}; got {got[:4]}"
        if lr.rule.id not in got:
            detail += f"; the rule did not fire: {why_not(lr, doc, rs)}"
        return [Result(name, False, detail)]
    return [Result(name, True), *(_under_transforms(lr, ex, rs) if transforms else [])]


def check_healthy(log: Path, rs: RuleSet) -> Result:
    """A healthy log: no error-level diagnosis."""
    rep = report(parse_path(str(log)), rs)
    bad = [x.rule_id for x in rep.diagnoses if x.severity in ERROR_LEVEL]
    return Result(f"healthy {log.name}", not bad, f"error-level diagnoses: {bad}" if bad else "")


def run_tests(
    rs: RuleSet, healthy_dirs: list[Path], only: str | None = None, transforms: bool = True
) -> list[Result]:
    results: list[Result] = []
    for lr in rs.rules:
        if only and lr.rule.id != only:
            continue
        if not lr.examples:
            results.append(Result(lr.rule.id, False, "no example log"))
        for ex in lr.examples:
            results += check_example(lr, ex, rs, transforms)
    if only is None:
        for d in healthy_dirs:
            for log in sorted(Path(d).glob("*.log")) if Path(d).is_dir() else []:
                results.append(check_healthy(log, rs))
    return results


def _under_transforms(lr, ex: Path, rs: RuleSet) -> list[Result]:
    """The example wrapped in each envelope real logs come in must still give the rule."""
    raw = ex.read_bytes()
    out = []
    for name, fn in TRANSFORMS:
        ok, got = _rank1(lr, report(parse(fn(raw), str(ex)), rs))
        out.append(
            Result(
                f"{lr.rule.id} <- {ex.name} [{name}]",
                ok,
                "" if ok else f"rank 1 is {got[0] if got else 'nothing'}; got {got[:4]}",
            )
        )
    return out
