"""Calibrate the first diagnosis's confidence on held-out logs, and print the calibration table.

Among first diagnoses given confidence ~0.8, about 80 % should be right ("right": the category
a person gave the log, as ``run_eval.py`` scores it; a first diagnosis on a healthy log is
wrong). Logs a rule was written from say nothing about that, so the answers come from:

- ``benchmarks/data/heldout-first-answers.jsonl``: the first diagnoses tracelens gave on two
  held-out rounds (logs rebuilt from public reports that no rule cited), recorded as measured
  before any rule was written for them (the commit of each run is in the file); their kind
  (:data:`tracelens.rulebook.calibration.KINDS`) is computed from the log's originating
  failure and the diagnosis's evidence lines;
- for unrecognized failures, which the rounds hold few of: every rule example and corpus
  incident answered again with its own rule left out (and its examples left out of the
  nearest-failure index): what a log meets when its failure has no rule yet; and the corpus's
  unrecognized logs.

For each kind the raw belief is mapped to the share of right answers by isotonic regression
(pool adjacent violators) in steps of at least ``--min-step`` answers; a kind with fewer answers
than that takes the share of all cause rules.

    python benchmarks/calibrate_confidence.py                 # print the tables
    python benchmarks/calibrate_confidence.py --write         # also rewrite the table in
                                                              # tracelens/rulebook/calibration.py
                                                              # and docs/confidence.md
    python benchmarks/calibrate_confidence.py --check DIR...  # also score run_eval-style cases
                                                              # (NAME.log + NAME.json "category")
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

from tracelens.engine import parse_path
from tracelens.models import ERROR_LEVEL
from tracelens.rulebook import calibration
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.rank import evaluate
from tracelens.rulebook.unrecognized import explains

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "tracelens" / "rulebook" / "calibration.py"
DOC = ROOT / "docs" / "confidence.md"
HELD_OUT = ROOT / "benchmarks" / "data" / "heldout-first-answers.jsonl"


@dataclass
class Case:
    source: str  # example / incident / unrecognized / a --check folder
    log: Path
    rule: str | None  # the expected rule, when one exists
    category: str


@dataclass
class Answer:
    case: Case
    left_out: bool
    kind: str
    raw: float
    confidence: float
    right: bool
    rule: str = ""
    category: str = ""


def labelled(rules) -> list[Case]:
    category = {lr.id: lr.rule.category for lr in rules.rules}
    cases: list[Case] = []
    for log in sorted((ROOT / "rules").glob("**/*.log")):
        rid = str(log.parent.relative_to(ROOT / "rules") / log.name.split(".example")[0])
        if rid in category:
            cases.append(Case("example", log, rid, category[rid]))
    for exp in sorted((ROOT / "corpus" / "incidents").glob("*.expect.yaml")):
        rid = (yaml.safe_load(exp.read_text()) or {}).get("top_rule")
        if rid in category:
            cases.append(
                Case("incident", exp.with_name(exp.name[:-12] + ".log"), rid, category[rid])
            )
    for exp in sorted((ROOT / "corpus" / "unrecognized").glob("*.expect.yaml")):
        cat = ((yaml.safe_load(exp.read_text()) or {}).get("unrecognized") or {}).get("category")
        if cat:
            cases.append(Case("unrecognized", exp.with_name(exp.name[:-12] + ".log"), None, cat))
    return cases


def held_out(folder: Path) -> list[Case]:
    cases = []
    for js in sorted(folder.glob("*.json")):
        cat = json.loads(js.read_text()).get("category")
        log = js.with_suffix(".log")
        if cat and log.exists():
            cases.append(Case(folder.name, log, None, cat))
    return cases


def answer(case: Case, rules, left_out: bool, table) -> Answer | None:
    doc = parse_path(str(case.log))
    saved = calibration.TABLE
    calibration.TABLE = table
    try:
        diags = evaluate(
            doc, rules, frozenset([case.rule]) if left_out and case.rule else frozenset()
        )
    finally:
        calibration.TABLE = saved
    if case.category == "none":  # a healthy log: only an alarm is an answer (a wrong one)
        diags = [d for d in diags if d.severity in ERROR_LEVEL]
    if not diags:
        return None
    first = diags[0]
    from tracelens.rulebook.origin import Wrappers, find_failures

    shown = find_failures(doc, Wrappers(rules.wrappers)).shown
    kind = calibration.kind_of(first, shown is not None and explains(first, shown))
    return Answer(
        case,
        left_out,
        kind,
        first.confidence,
        first.confidence,
        first.category == case.category,
        first.rule_id,
        first.category,
    )


def pav(points: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Isotonic regression of (x, y, weight) points: blocks of (upper x, mean y, weight)."""
    blocks: list[list[float]] = []  # [upper x, sum of w*y, sum of w]
    for x, y, w in sorted(points):
        blocks.append([x, w * y, w])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            x2, s2, w2 = blocks.pop()
            blocks[-1] = [x2, blocks[-1][1] + s2, blocks[-1][2] + w2]
    return [(b[0], b[1] / b[2], b[2]) for b in blocks]


def recorded() -> list[Answer]:
    out = []
    for line in HELD_OUT.read_text().splitlines():
        x = json.loads(line)
        if x["raw"] is None:
            continue  # a log with no diagnosis has no confidence to calibrate
        case = Case(x["round"], Path(x["log"]), None, x["expected"])
        out.append(
            Answer(case, False, x["kind"], x["raw"], x["raw"], x["category"] == x["expected"])
        )
    return out


def _steps(pts: list[tuple[float, float]], min_step: int) -> list[tuple[float, float]]:
    """Isotonic steps (raw upper bound, share right), each of at least ``min_step`` answers;
    the share is smoothed toward 1/2 by one right and one wrong answer."""
    by_x: dict[float, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for x, y in pts:
        by_x[x][0] += y
        by_x[x][1] += 1
    blocks = [list(b) for b in pav([(x, s / n, n) for x, (s, n) in by_x.items()])]
    merged: list[list[float]] = []
    for upper, mean, n in blocks:
        if merged and merged[-1][2] < min_step:
            prev = merged.pop()
            mean, n = (prev[1] * prev[2] + mean * n) / (prev[2] + n), prev[2] + n
        merged.append([upper, mean, n])
    if len(merged) > 1 and merged[-1][2] < min_step:
        last = merged.pop()
        merged[-1] = [
            last[0],
            (merged[-1][1] * merged[-1][2] + last[1] * last[2]) / (merged[-1][2] + last[2]),
            merged[-1][2] + last[2],
        ]
    merged[-1][0] = 1.0

    # each share with one right and one wrong answer added (Laplace's rule of succession): a
    # step of a dozen answers that were all wrong says "rarely right", not "never"
    def smoothed(m: float, n: float) -> float:
        return round(min(max((m * n + 1) / (n + 2), 0.01), 0.99), 2)

    # the smoothing pulls a small step toward 1/2 more than a large one and may undo the order
    # the pooling made: a step below the one before it is pooled with it again
    k = 1
    while k < len(merged):
        (_u0, m0, n0), (u1, m1, n1) = merged[k - 1], merged[k]
        if smoothed(m1, n1) < smoothed(m0, n0):
            merged[k - 1 : k + 1] = [[u1, (m0 * n0 + m1 * n1) / (n0 + n1), n0 + n1]]
            k = max(k - 1, 1)
        else:
            k += 1
    return [(round(u, 2), smoothed(m, n)) for u, m, n in merged]


def fit(
    held: list[Answer], simulated: list[Answer], min_step: int
) -> dict[str, list[tuple[float, float]]]:
    causes = [a for a in held if a.kind != calibration.UNRECOGNIZED]
    pooled = _steps([(a.raw, float(a.right)) for a in causes], min_step) if causes else []
    table: dict[str, list[tuple[float, float]]] = {}
    for kind in calibration.KINDS:
        if kind == calibration.UNRECOGNIZED:
            pts = [(a.raw, float(a.right)) for a in [*held, *simulated] if a.kind == kind]
        else:
            pts = [(a.raw, float(a.right)) for a in held if a.kind == kind]
        table[kind] = _steps(pts, min_step) if len(pts) >= min_step else pooled
    return table


def bins(answers: list[Answer], table) -> list[tuple[str, int, float, float]]:
    """(bin, answers, mean confidence, share right) per 0.1 of confidence."""
    acc: dict[int, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for a in answers:
        conf = calibration.lookup(table.get(a.kind, []), a.raw) if table is not None else a.raw
        b = acc[min(int(conf * 10), 9)]
        b[0] += 1
        b[1] += conf
        b[2] += a.right
    return [
        (f"{k / 10:.1f}-{(k + 1) / 10:.1f}", int(v[0]), v[1] / v[0], v[2] / v[0])
        for k, v in sorted(acc.items())
    ]


def md_table(rows) -> list[str]:
    lines = ["| confidence | answers | mean confidence | right |", "|---|---|---|---|"]
    for name, n, conf, right in rows:
        lines.append(f"| {name} | {n} | {conf:.2f} | {right:.0%} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-step", type=int, default=10)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--check", nargs="*", type=Path, default=[])
    ap.add_argument(
        "--record",
        type=Path,
        metavar="FOLDER",
        help="append the first diagnoses of a held-out round (run_eval cases) to the recorded "
        "answers, as this tree gives them: run it before any rule is written for the round",
    )
    args = ap.parse_args()
    rules = default_rules()
    if args.record:
        return record(args.record, rules)
    held = recorded()
    simulated: list[Answer] = []
    in_sample: list[Answer] = []
    for case in labelled(rules):
        a = answer(case, rules, False, {})
        if a is not None:
            in_sample.append(a)
        if case.rule:
            a = answer(case, rules, True, {})
            if a is not None and a.kind == calibration.UNRECOGNIZED:
                simulated.append(a)
    simulated += [a for a in in_sample if a.case.source == "unrecognized"]
    table = fit(held, simulated, args.min_step)
    report = ["# Confidence calibration", "", _intro(held, simulated, args), ""]
    report += ["## Steps (raw belief -> confidence)", ""]
    for kind, steps in table.items():
        shown = ", ".join(f"up to {u:.2f}: {v:.2f}" for u, v in steps)
        report.append(f"- `{kind}`: {shown}")
    report += ["", f"## Held-out rounds ({len(held)} first diagnoses): raw belief", ""]
    report += md_table(bins(held, None))
    report += ["", "## Held-out rounds: calibrated", ""]
    report += md_table(bins(held, table))
    # r7 < r8 < ... < r12 by their number, so the latest round is the one left out
    rounds = sorted({a.case.source for a in held}, key=lambda r: (len(r), r))
    if len(rounds) > 1:  # the table fit without the latest round, scored on that round
        last = rounds[-1]
        earlier = fit([a for a in held if a.case.source != last], simulated, args.min_step)
        latest = [a for a in held if a.case.source == last]
        report += [
            "",
            f"## Validation: fit on {', '.join(rounds[:-1])} only, scored on {last} "
            f"({len(latest)} first diagnoses)",
            "",
        ]
        report += md_table(bins(latest, earlier))
    report += [
        "",
        f"## Unrecognized, own rule left out and corpus ({len(simulated)}): calibrated",
        "",
    ]
    report += md_table(bins(simulated, table))
    report += ["", f"## Logs rules were written from ({len(in_sample)}; in sample): calibrated", ""]
    report += md_table(bins(in_sample, table))
    for folder in args.check:
        checked = [a for c in held_out(folder) if (a := answer(c, rules, False, {})) is not None]
        report += ["", f"## Check: {folder.name} ({len(checked)} failing logs), calibrated", ""]
        report += md_table(bins(checked, table))
    text = "\n".join(report) + "\n"
    print(text)
    if args.write:
        src = MODULE.read_text()
        body = "TABLE: dict[str, list[tuple[float, float]]] = " + _format(table) + "\n"
        src = re.sub(
            r"(# BEGIN GENERATED TABLE[^\n]*\n).*?(# END GENERATED TABLE)",
            lambda m: m.group(1) + body + m.group(2),
            src,
            flags=re.S,
        )
        MODULE.write_text(src)
        DOC.write_text(text)
        print(f"wrote {MODULE.relative_to(ROOT)} and {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


def record(folder: Path, rules) -> int:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    seen = {
        (row["round"], row["log"])
        for row in map(json.loads, HELD_OUT.read_text().splitlines() if HELD_OUT.exists() else [])
    }
    rows = []
    for case in held_out(folder):
        if (folder.name, case.log.name) in seen:
            continue  # a first answer is recorded once: a later run would answer with its rule
        a = answer(case, rules, False, {})
        if a is None:  # no diagnosis at all (silent, or healthy): recorded too, once
            rows.append(
                {
                    "round": folder.name,
                    "commit": commit,
                    "log": case.log.name,
                    "expected": case.category,
                    "rule": None,
                    "category": "none",
                    "raw": None,
                    "kind": "none",
                }
            )
        else:
            rows.append(
                {
                    "round": folder.name,
                    "commit": commit,
                    "log": case.log.name,
                    "expected": case.category,
                    "rule": a.rule,
                    "category": a.category,
                    "raw": a.raw,
                    "kind": a.kind,
                }
            )
    with HELD_OUT.open("a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(
        f"recorded {len(rows)} first diagnoses of {folder.name} "
        f"({sum(1 for r, _ in seen if r == folder.name)} recorded before, left as they were)",
        file=sys.stderr,
    )
    return 0


def _format(table) -> str:
    """The table as ruff formats it (one line per kind when it fits in 100 columns)."""
    lines = ["{"]
    for kind, steps in table.items():
        pairs = [f"({u!r}, {v!r})" for u, v in steps]
        one = f'    "{kind}": [{", ".join(pairs)}],'
        if len(one) <= 100:
            lines.append(one)
        else:
            lines += [f'    "{kind}": [', *(f"        {p}," for p in pairs), "    ],"]
    lines.append("}")
    return "\n".join(lines)


def _intro(held: list[Answer], simulated: list[Answer], args) -> str:
    # r7 < r8 < ... < r12 by their number, so the latest round is the one left out
    rounds = sorted({a.case.source for a in held}, key=lambda r: (len(r), r))
    return (
        "Written by `python benchmarks/calibrate_confidence.py --write`. Cause rules are "
        f"calibrated on {len(held)} first diagnoses of the held-out rounds {', '.join(rounds)} "
        "(logs rebuilt from public reports no rule cited, answered before any rule was written "
        "for them; benchmarks/data/heldout-first-answers.jsonl), unrecognized failures also on "
        f"{len(simulated)} logs answered with their own rule left out or from the corpus of "
        "unrecognized failures. A first diagnosis is right when it has the category a person "
        f"gave the log (on a healthy log it is wrong). Steps hold at least {args.min_step} "
        "answers; each step's share counts one right and one wrong answer more (Laplace's rule "
        "of succession: a few answers that were all wrong say rarely right, not never). Only the first diagnosis is calibrated; the rest keep their raw belief."
    )


if __name__ == "__main__":
    sys.exit(main())
