"""The incident list's word filter on a large store: building its word index (reading the
searched text from the store and splitting it into words; done once, in a background thread
from 5,000 incidents on) and one search per keystroke of "cuda memo", wall and CPU time, best
of --runs.

    python benchmarks/bench_tui_filter.py [--incidents 10000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import functools
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_similar import fill  # noqa: E402

from tracelens.incidents.store import Store  # noqa: E402
from tracelens.tui.filtering import WordIndex  # noqa: E402

QUERY = "cuda memo"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn):
    w, c = time.perf_counter(), cpu()
    out = fn()
    return out, time.perf_counter() - w, cpu() - c


def build(db: Path) -> WordIndex:
    """What the screen does: the listed columns and the stored text, then the index."""
    store = Store(db, create=False)
    texts = [
        " ".join(x or "" for x in row)
        for row in store.db.execute(
            "SELECT title, category, rule_id, message, resolution_note, signature FROM incidents"
        )
    ]
    store.close()
    return WordIndex(texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", default="10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for n in (int(x) for x in args.incidents.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "incidents.db"
            fill(Store(db), n)
            runs = [timed(functools.partial(build, db)) for _ in range(args.runs)]
            index = runs[-1][0]
            worst_wall = worst_cpu = 0.0
            for k in range(1, len(QUERY) + 1):
                search = functools.partial(index.search, QUERY[:k])
                best = min(timed(search)[1:] for _ in range(args.runs))
                worst_wall, worst_cpu = max(worst_wall, best[0]), max(worst_cpu, best[1])
            print(
                f"{n} incidents: index built in {min(r[1] for r in runs):.2f} s wall, "
                f"{min(r[2] for r in runs):.2f} s CPU ({len(index.vocabulary)} words); "
                f"one keystroke of {QUERY!r}: at worst {worst_wall * 1000:.1f} ms wall, "
                f"{worst_cpu * 1000:.1f} ms CPU; {len(index.search(QUERY))} match"
            )


if __name__ == "__main__":
    main()
