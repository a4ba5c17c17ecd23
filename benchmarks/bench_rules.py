"""How the cost of `tracelens diagnose` grows with the number of rules.

Generates N extra rules (distinct failure literals, exception/frame/line conditions, like real
ones), then times `tracelens diagnose` on the same large log with the shipped rules alone and
with the shipped rules plus the generated ones. Rule files are validated once and cached, so
the second run of each is the steady state that is reported.

    python benchmarks/bench_rules.py [--rules 1000] [--size-mb 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_diagnose import build  # noqa: E402

RULE = """\
id: gen/rule-{k:04d}
title: Generated failure {k}
category: {category}
severity: fatal
needs: ["GeneratedFailure{k:04d}"]
match:
  all:
    - exception: {{type: 'GeneratedFailure{k:04d}Error$', message: 'component {k} failed: (?P<why>.+)'}}
  any:
    - frame: {{function: '^generated_{k}$'}}
    - line: 'generated component {k} (?:stopped|crashed)'
root_cause: "Component {k} failed: {{why}}"
remedies:
  - title: Restart component {k}
references: [https://example.org/{k}]
"""
CATEGORIES = ["gpu-oom", "nccl-error", "config-invalid", "model-access", "dependency-missing"]


def timed(cmd: list[str], env: dict, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, env=env, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=1000)
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        build(log, args.size_mb)
        gen = Path(tmp) / "generated"
        (gen / "gen").mkdir(parents=True)
        for k in range(args.rules):
            (gen / "gen" / f"rule-{k:04d}.yaml").write_text(
                RULE.format(k=k, category=CATEGORIES[k % 5])
            )
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        cmd = [str(Path(sys.executable).with_name("tracelens")), "diagnose", str(log)]
        base = timed(cmd, env, args.runs)
        more = timed(cmd + ["--rules", str(gen)], env, args.runs)
        print(f"log: {log.stat().st_size / 1e6:.0f} MB")
        print(f"shipped rules:                    {base:6.2f} s")
        print(f"shipped + {args.rules} generated rules: {more:6.2f} s  ({more / base:.2f}x)")


if __name__ == "__main__":
    main()
