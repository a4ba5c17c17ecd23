"""`tracelens diagnose` of a ~50 KB crash log, the whole command, with no incident store and
with a store of a million incidents (where it also lists similar past incidents), next to a
bare Python start. Runs are interleaved, so a slow spell of a shared machine hits all of them
alike; each figure is wall time and the child's CPU time (user + system), best and median.

    python benchmarks/bench_diagnose_store.py [--incidents 1000000] [--store /tmp/big.db] [--runs 15]
        [--tree DIR ...]

``--store`` shares the store with ``bench_similar.py`` and ``bench_tui.py``. ``--tree DIR``
(repeatable) runs the same two commands from another source tree too, in the same loop, for
before/after figures: a ``git archive`` of an earlier commit unpacked in DIR, run by the same
interpreter with ``PYTHONPATH=DIR``. Every tree's bytecode is compiled first, as an install
has it, and each command runs once before the timed runs (a tree's first run builds its rule
index).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_similar import big_store, store_options  # noqa: E402

SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.PIPE, check=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    store_options(ap, 1_000_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="DIR",
        help="another source tree to run too, interleaved (repeatable)",
    )
    args = ap.parse_args()
    exe = str(Path(sys.executable).with_name("tracelens"))
    trees = {"": None} | {f" [{Path(t).name}]": Path(t).resolve() for t in args.tree}
    for tree in [ROOT, *(t for t in trees.values() if t is not None)]:
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "tracelens")], check=True
        )
    with big_store(args.incidents, args.store) as db, tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        log.write_bytes(data[:8000] + data[-42000:])  # startup facts + the crash: ~50 KB
        base = dict(os.environ)
        cases = {"python -c pass": ([sys.executable, "-c", "pass"], base)}
        for label, tree in trees.items():
            env = base if tree is None else base | {"PYTHONPATH": str(tree)}
            cases[f"diagnose, no store{label}"] = (
                [exe, "diagnose", str(log)],
                env | {"TRACELENS_DB": str(Path(tmp) / "none.db")},
            )
            cases[f"diagnose, 1 M store{label}"] = (
                [exe, "diagnose", str(log)],
                env | {"TRACELENS_DB": str(db)},
            )
        for cmd, env in cases.values():  # untimed: a tree's first run builds its rule index
            child(cmd, env)
        load = os.getloadavg()[0]
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (cmd, env) in cases.items():
                figures[name].append(child(cmd, env))
        print(f"crash log of {log.stat().st_size / 1e3:.0f} KB, best / median of {args.runs}:")
        mid = args.runs // 2
        for name, runs in figures.items():
            walls, cpus = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
            print(
                f"  {name:36s} wall {walls[0] * 1000:5.0f} / {walls[mid] * 1000:5.0f} ms   "
                f"CPU {cpus[0] * 1000:5.0f} / {cpus[mid] * 1000:5.0f} ms"
            )
        print(
            f"load average: {load:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores"
        )


if __name__ == "__main__":
    main()
