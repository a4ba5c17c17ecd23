"""Instructions a `tracelens diagnose` of the ~50 KB crash log executes, counted by valgrind's
callgrind: a figure that other work on a shared machine does not move (wall and CPU times do),
for comparing two trees. Hash randomization is fixed (PYTHONHASHSEED=0), every tree's bytecode
is compiled first and each command runs once before it is counted (a tree's first run builds
its rule index).

    python benchmarks/bench_instructions.py [--tree DIR ...] [--store PATH]

``--tree DIR`` (repeatable) counts another source tree too (a ``git archive`` or worktree of an
earlier commit), run by the same interpreter with ``PYTHONPATH=DIR``. ``--store PATH`` counts
the run with that incident store as well (where ``diagnose`` lists similar incidents).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(cmd: list[str], env: dict[str, str], cwd: str) -> int:
    """Instructions callgrind counts for ``cmd`` (its children not followed), run in ``cwd``
    (not the repository: ``python -c`` imports from its working folder first)."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    m = _REFS.search(out.stderr)
    if m is None:
        raise SystemExit(f"no count from valgrind: {out.stderr.strip()[-300:]}")
    return int(m.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", action="append", default=[], metavar="DIR")
    ap.add_argument("--store", default=None, metavar="PATH")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        small.write_bytes(data[:8000] + data[-42000:])  # as bench_diagnose.py builds it
        run = (
            "import sys; sys.argv = ['tracelens', *sys.argv[1:]]; "
            "from tracelens.cli.entry import run; run()"
        )
        base_env = {**os.environ, "PYTHONHASHSEED": "0"}
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        trees: dict[str, dict[str, str]] = {"this install": base_env}
        for t in args.tree:
            tree = Path(t).resolve()
            compileall.compile_dir(str(tree / "tracelens"), quiet=1)
            trees[tree.name] = {**base_env, "PYTHONPATH": str(tree)}
        stores = {"no store": str(Path(tmp) / "none.db")}
        if args.store:
            stores["store"] = args.store
        print("instructions of `tracelens diagnose` of a 50 KB crash log (callgrind, millions):")
        for name, env in trees.items():
            for label, db in stores.items():
                e = {**env, "TRACELENS_DB": db}
                cmd = [sys.executable, "-c", run, "diagnose", str(small)]
                subprocess.run(cmd, stdout=subprocess.DEVNULL, env=e, cwd=tmp)  # the rule index
                n = instructions(cmd, e, tmp)
                print(f"  {name:24s} {label:9s} {n / 1e6:8.0f} M")
        n = instructions([sys.executable, "-c", "pass"], base_env, tmp)
        print(f"  {'python -c pass':34s} {n / 1e6:8.0f} M")


if __name__ == "__main__":
    main()
