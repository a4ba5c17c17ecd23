"""``rules lint`` and ``rules test``: the knowledge base checks itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .engine import parse_path, report
from .rulebook import RuleSet


@dataclass
class Result:
    name: str
    ok: bool
    detail: str = ""


def lint(rs: RuleSet) -> list[str]:
    """Problems beyond schema validity: missing examples, references that are not URLs."""
    problems: list[str] = []
    for lr in rs.rules:
        r = lr.rule
        if not lr.examples:
            problems.append(f"{lr.path}: examples: no example log beside the rule ({lr.path.stem}.example.log)")
        for ref in r.references:
            if not ref.startswith(("https://", "http://")):
                problems.append(f"{lr.path}: references: {ref!r} is not a URL")
    return problems


def run_tests(rs: RuleSet, healthy_dirs: list[Path], only: str | None = None) -> list[Result]:
    results: list[Result] = []
    for lr in rs.rules:
        if only and lr.rule.id != only:
            continue
        if not lr.examples:
            results.append(Result(lr.rule.id, False, "no example log"))
        for ex in lr.examples:
            rep = report(parse_path(str(ex)), rs)
            got = [d.rule_id for d in rep.diagnoses]
            if got and got[0] == lr.rule.id:
                results.append(Result(f"{lr.rule.id} <- {ex.name}", True))
            else:
                results.append(Result(f"{lr.rule.id} <- {ex.name}", False, f"rank 1 is {got[0] if got else 'nothing'}; got {got[:4]}"))
    if only is None:
        for d in healthy_dirs:
            for log in sorted(Path(d).glob("*.log")) if Path(d).is_dir() else []:
                rep = report(parse_path(str(log)), rs)
                got = [x.rule_id for x in rep.diagnoses]
                results.append(Result(f"healthy {log.name}", not got, f"rules fired: {got}" if got else ""))
    return results
