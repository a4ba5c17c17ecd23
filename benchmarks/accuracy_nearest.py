"""How often the nearest known failure gives an unrecognized failure the right category.

For each labelled log (a folder of ``NAME.log`` with ``NAME.expect.yaml`` holding
``unrecognized.category``, or ``NAME.json`` holding ``category`` as run_eval cases do), the
originating failure is matched against the index of the rules' example logs; the table shows,
for each threshold, how many logs take the nearest rule's category (coverage), how many of
those are right (precision), and how many the fallback by failure kind gets right.

    python benchmarks/accuracy_nearest.py corpus/unrecognized [MORE_FOLDERS...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from tracelens.engine import parse_path
from tracelens.rulebook.guess import guess_category
from tracelens.rulebook.load import default_rules
from tracelens.rulebook.nearest import THRESHOLD, index, nearest
from tracelens.rulebook.origin import Wrappers, find_origin
from tracelens.rulebook.unrecognized import choose_category


def labelled(folder: Path):
    for log in sorted(folder.glob("*.log")):
        exp = log.with_name(log.name[:-4] + ".expect.yaml")
        js = log.with_suffix(".json")
        if exp.exists():
            data = yaml.safe_load(exp.read_text()) or {}
            cat = (data.get("unrecognized") or {}).get("category")
        elif js.exists():
            cat = json.loads(js.read_text()).get("category")
        else:
            continue
        if cat and cat != "none":
            yield log, cat


def main(folders: list[str]) -> None:
    rules = default_rules()
    entries = index(rules)
    wrappers = Wrappers(rules.wrappers)
    rows = []
    for folder in folders:
        for log, cat in labelled(Path(folder)):
            origin, _ = find_origin(parse_path(str(log)), wrappers)
            if origin is None:
                rows.append((log.name, cat, None, -1.0, None))
                continue
            near = nearest(origin, entries, limit=1)
            top = near[0] if near else None
            chosen, _ = choose_category(origin, near, THRESHOLD)
            rows.append(
                (
                    log.name,
                    cat,
                    top.category if top else None,
                    top.score if top else 0.0,
                    guess_category(origin),
                    chosen,
                )
            )
    n = len(rows)
    print(
        f"{n} labelled failing logs, {sum(1 for r in rows if r[3] < 0)} without an originating failure found"
    )
    print("threshold  take-nearest  right  wrong  | fallback right (rest)  | all right")
    for t in (40, 45, 50, 55, 60, 65, 70, 75, 80, 90, 101):
        took = [r for r in rows if r[2] and r[3] >= t]
        right = sum(1 for r in took if r[2] == r[1])
        rest = [r for r in rows if not (r[2] and r[3] >= t)]
        fb = sum(1 for r in rest if r[4] == r[1])
        print(
            f"{t:>9}  {len(took):>12}  {right:>5}  {len(took) - right:>5}  | {fb:>5} of {len(rest):<14}  | {right + fb}/{n}"
        )
    shipped = sum(1 for r in rows if len(r) > 5 and r[5] == r[1])
    print(
        f"as shipped (the nearest from {THRESHOLD:g}, else the guess by kind and words): {shipped}/{n} right"
    )
    if "-v" in sys.argv:
        for r in rows:
            print(r)


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if a != "-v"])
