"""How many diagnoses survive each envelope of :data:`tracelens.authoring.transforms.TRANSFORMS`:
every rule example log (and, with ``--corpus``, every corpus incident log with an expected first
rule) is wrapped in the envelope and its first rule compared with the expected one (the first
row, ``(unwrapped)``, is the logs as they are); every
shipped healthy log is wrapped the same way and must stay free of error-level diagnoses.

    python benchmarks/accuracy_envelopes.py                       # every envelope
    python benchmarks/accuracy_envelopes.py markdown-quote --show 5 --corpus

Prints one row per envelope: examples that kept their rule, corpus logs that kept their expected
rule, healthy logs that stayed healthy; then the first ``--show`` misses per envelope.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracelens.authoring.transforms import TRANSFORMS  # noqa: E402
from tracelens.engine import parse, report  # noqa: E402
from tracelens.models import ERROR_LEVEL  # noqa: E402
from tracelens.rulebook.load import load, rule_dirs, shipped_healthy_dir  # noqa: E402
from tracelens.rulebook.unrecognized import RULE_ID as UNRECOGNIZED  # noqa: E402


def _first(data: bytes, rules, secondary: bool = False) -> str | None:
    """The first rule, as ``tracelens rules test`` counts it (a symptom's example may come
    after an unrecognized failure)."""
    got = [d.rule_id for d in report(parse(data), rules).diagnoses]
    if secondary:
        got = [g for g in got if g != UNRECOGNIZED] or got
    return got[0] if got else None


def _healthy(data: bytes, rules) -> bool:
    return not [d for d in report(parse(data), rules).diagnoses if d.severity in ERROR_LEVEL]


def main() -> None:
    names = [n for n, _ in TRANSFORMS]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("envelopes", nargs="*", help=f"envelopes (default: all): {', '.join(names)}")
    ap.add_argument("--corpus", action="store_true", help="also the corpus incident logs")
    ap.add_argument("--show", type=int, default=0, help="list this many misses per envelope")
    args = ap.parse_args()
    unknown = sorted(set(args.envelopes) - set(names))
    if unknown:
        sys.exit(f"error: unknown envelope {unknown[0]!r}; known: {', '.join(names)}")
    rules = load(rule_dirs())
    examples = [
        (ex.name, ex.read_bytes(), lr.rule.id, bool(lr.rule.secondary))
        for lr in rules.rules
        for ex in lr.examples
    ]
    corpus = []
    if args.corpus:
        for log in sorted((ROOT / "corpus" / "incidents").glob("*.log")):
            exp = yaml.safe_load(log.with_name(log.name[:-4] + ".expect.yaml").read_text())
            if exp and exp.get("top_rule"):
                corpus.append((log.name, log.read_bytes(), exp["top_rule"], False))
    healthy = [(p.name, p.read_bytes()) for p in sorted(shipped_healthy_dir().glob("*.log"))]
    print(f"{len(examples)} rule examples, {len(corpus)} corpus logs, {len(healthy)} healthy logs")
    print(f"{'envelope':22} {'examples':>11} {'corpus':>11} {'healthy':>11}")
    for name, fn in (("(unwrapped)", lambda raw: raw), *TRANSFORMS):
        if args.envelopes and name != "(unwrapped)" and name not in args.envelopes:
            continue
        miss = [
            (n, want, got)
            for n, d, want, sec in examples
            if (got := _first(fn(d), rules, sec)) != want
        ]
        cmiss = [
            (n, want, got)
            for n, d, want, sec in corpus
            if (got := _first(fn(d), rules, sec)) != want
        ]
        alarms = [(n, "healthy", "error") for n, d in healthy if not _healthy(fn(d), rules)]
        row = [
            f"{len(examples) - len(miss)}/{len(examples)}",
            f"{len(corpus) - len(cmiss)}/{len(corpus)}" if corpus else "-",
            f"{len(healthy) - len(alarms)}/{len(healthy)}",
        ]
        print(f"{name:22} {row[0]:>11} {row[1]:>11} {row[2]:>11}", flush=True)
        for miss_row in (miss + cmiss + alarms)[: args.show]:
            print("    ", *miss_row)


if __name__ == "__main__":
    main()
