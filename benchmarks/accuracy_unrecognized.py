"""How often an unrecognized failure gets the right category, measured as it would have been
on each held-out round's first run: against the rules' example logs that existed then.

Each corpus log of a held-out round (``corpus/*/heldout-rNN-*.log``, labelled by its expected
rule's category, or ``unrecognized.category``) is compared with the nearest-failure index and
the words table built only from the example logs added to the repository before the round's
first answers were recorded (``benchmarks/data/heldout-first-answers.jsonl`` gives the commit;
``git log`` the time each example was added). Printed: how many get the right category by the
guess alone, by the words alone, by the nearest at each threshold with the guess below it (the
rule before the words table), and as shipped (``choose_category``), over all rounds and over the
latest ones. Needs the repository's git history.

    python benchmarks/accuracy_unrecognized.py [--from N] [--show]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

from tracelens.engine import parse_path
from tracelens.rulebook.guess import guess_category
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.nearest import THRESHOLD, Entry, by_words, entry_of, nearest
from tracelens.rulebook.origin import Wrappers, find_origin
from tracelens.rulebook.unrecognized import choose_category
from tracelens.rulebook.words import Words

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> str:
    return subprocess.check_output(["git", "-C", str(ROOT), *args], text=True)


def added_times() -> dict[str, int]:
    """Each file under rules/ and the time of the commit that last added it."""
    out: dict[str, int] = {}
    when = 0
    for line in git(
        "log", "--diff-filter=A", "--name-only", "--format=@%ct", "--", "rules"
    ).splitlines():
        if line.startswith("@"):
            when = int(line[1:])
        elif line and line not in out:
            out[line] = when
    return out


def round_times() -> dict[str, int]:
    first: dict[str, str] = {}
    for line in (ROOT / "benchmarks/data/heldout-first-answers.jsonl").read_text().splitlines():
        row = json.loads(line)
        first.setdefault(row["round"], row["commit"])
    return {r: int(git("show", "-s", "--format=%ct", c).strip()) for r, c in first.items()}


def labelled(categories: dict[str, str]):
    """(round, log, category) of every corpus log of a held-out round with a failure."""
    for log in sorted((ROOT / "corpus").glob("*/heldout-r*.log")):
        expect = log.with_name(log.name[:-4] + ".expect.yaml")
        if not expect.exists() or log.parent.name == "healthy":
            continue
        data = yaml.safe_load(expect.read_text()) or {}
        cat = (data.get("unrecognized") or {}).get("category") or categories.get(
            data.get("top_rule") or ""
        )
        if cat:
            yield log.name.split("-")[1], log, cat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--from", dest="since", type=int, default=120, help="the latest rounds: from rN"
    )
    ap.add_argument("--show", action="store_true", help="one line per log")
    args = ap.parse_args()
    rules = default_rules()
    wrappers = Wrappers(rules.wrappers)
    categories = {lr.id: lr.rule.category for lr in rules.rules}
    added = added_times()
    entries: list[tuple[int, Entry]] = []
    for k, paths in rules.cause_examples():  # what the nearest-failure index is made of
        lr = rules.rules[k]
        for path in paths:
            origin, _ = find_origin(parse_path(str(path)), wrappers)
            if origin is None:
                continue
            entry = entry_of(lr, origin)
            entries.append((added.get(str(Path(path).resolve().relative_to(ROOT)), 0), entry))
    times = round_times()
    thresholds = (55, 70, 85, 101)
    counts: dict[str, list[int]] = {}
    tables: dict[str, tuple[list[Entry], Words]] = {}
    n = [0, 0]
    for rnd, log, cat in labelled(categories):
        if rnd not in times:
            continue
        if rnd not in tables:
            known = [e for t, e in entries if t < times[rnd]]
            tables[rnd] = (known, Words.build(known))
        known, table = tables[rnd]
        origin, _ = find_origin(parse_path(str(log)), wrappers)
        if origin is None:
            continue
        near = nearest(origin, known, limit=3)
        words = by_words(origin, known, table)
        best = near[0] if near else None
        answers = {
            "the guess alone": guess_category(origin),
            "the words alone": words[0] if words else "unrecognized",
        }
        for t in thresholds:
            take = best is not None and best.score >= t
            name = "the guess alone" if t > 100 else f"the nearest from {t}, else the guess"
            answers.setdefault(name, best.category if take else guess_category(origin))
        answers[f"as shipped (nearest from {THRESHOLD:g}, guess, words)"] = choose_category(
            origin, near, THRESHOLD, words
        )[0]
        late = int(rnd[1:]) >= args.since
        n[0] += 1
        n[1] += late
        for name, got in answers.items():
            row = counts.setdefault(name, [0, 0])
            row[0] += got == cat
            row[1] += late and got == cat
        if args.show:
            print(rnd, log.name[:70], cat, *answers.values(), sep=" | ")
    print(
        f"{n[0]} labelled failing logs of {len(tables)} held-out rounds; r{args.since} and later: {n[1]}"
    )
    for name, (right, late) in counts.items():
        print(
            f"  {name:48} {right:4d} ({right / max(n[0], 1):.0%})   {late:4d} ({late / max(n[1], 1):.0%})"
        )


if __name__ == "__main__":
    sys.exit(main())
