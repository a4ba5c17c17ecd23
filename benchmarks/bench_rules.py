"""How the cost of `tracelens diagnose` grows with the number of rules.

Generates N extra rules (distinct failure literals, exception/frame/line conditions, like real
ones) in a temporary folder (deleted afterwards), then runs the whole `tracelens diagnose`
command with the shipped rules alone and with the shipped rules plus the generated ones
(`--rules DIR`), on a ~50 KB crash log and on a large server log. Runs of the two rule sets
are interleaved (a slow spell of a shared machine hits both alike); each run's wall time, CPU
time (user + system) and peak RSS come from the child's own resource usage (`wait4`).

The rule index is built by a first run of each set and is current afterwards, so the timed
runs are the steady state; the first run's time (building the index of N rules) is printed too,
and so is one run after a rule file was edited (the index rebuilt, that file parsed again).

    python benchmarks/bench_rules.py [--rules 10000] [--size-mb 50] [--runs 15] [--big-runs 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_diagnose import SEED, build  # noqa: E402

RULE = """\
id: gen/rule-{k:05d}
title: Generated failure {k}
category: {category}
severity: fatal
needs: ["GeneratedFailure{k:05d}"]
match:
  all:
    - exception: {{type: 'GeneratedFailure{k:05d}Error$', message: 'component {k} failed: (?P<why>.+)'}}
  any:
    - frame: {{function: '^generated_{k}$'}}
    - line: 'generated component {k} (?:stopped|crashed)'
root_cause: "Component {k} failed: {{why}}"
remedies:
  - title: Restart component {k}
references: [https://example.org/{k}]
"""
CATEGORIES = ["gpu-oom", "nccl-error", "config-invalid", "model-access", "dependency-missing"]


def run(cmd: list[str], env: dict) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one run of ``cmd``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1: a diagnosis with a fatal failure (the gate)
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(cmds: dict[str, list[str]], env: dict, runs: int) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            out[name].append(run(cmd, env))
    return out


def show(title: str, results: dict[str, list[tuple]]) -> None:
    print(title)
    print(f"  {'':28s} {'wall best/median':>18s} {'CPU best/median':>18s} {'peak RSS':>9s}")
    base = None
    for name, rows in results.items():
        walls = [r[0] for r in rows]
        cpus = [r[1] for r in rows]
        rss = statistics.median(r[2] for r in rows)
        line = (
            f"  {name:28s} {min(walls) * 1e3:7.0f} /{statistics.median(walls) * 1e3:5.0f} ms"
            f" {min(cpus) * 1e3:7.0f} /{statistics.median(cpus) * 1e3:5.0f} ms {rss:6.1f} MiB"
        )
        if base is None:
            base = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
        else:
            now = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
            ratios = "/".join(f"{a / b:.2f}" for a, b in zip(now, base))
            line += f"  ({ratios}x wall best/median, CPU best/median)"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", type=int, default=10000)
    ap.add_argument("--size-mb", type=int, default=50, help="the large log (0: skip it)")
    ap.add_argument("--runs", type=int, default=15, help="runs of each set on the crash log")
    ap.add_argument("--big-runs", type=int, default=3, help="runs of each set on the large log")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # still delete the temporary files
    exe = [str(Path(sys.executable).with_name("tracelens")), "diagnose"]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "generated"
        (gen / "gen").mkdir(parents=True)
        for k in range(args.rules):
            (gen / "gen" / f"rule-{k:05d}.yaml").write_text(
                RULE.format(k=k, category=CATEGORIES[k % 5])
            )
        written = time.time()
        small = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        small.write_bytes(data[:8000] + data[-42000:])  # startup facts + the crash: ~50 KB
        big = Path(tmp) / "server.log"
        if args.size_mb:
            build(big, args.size_mb)
        # the index takes a file changed in the last 2 s as unsettled and looks again next run
        time.sleep(max(0.0, written + 2.5 - time.time()))
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        sets = {"shipped rules": [], f"shipped + {args.rules} rules": ["--rules", str(gen)]}
        for name, extra in sets.items():  # the first run builds the index
            wall, cpu, rss = run(exe + [str(small)] + extra, env)
            print(f"first run, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MiB")
            run(exe + [str(small)] + extra, env)
        size = small.stat().st_size / 1e3
        show(
            f"crash log of {size:.0f} KB, whole command, best / median of {args.runs}:",
            measure({n: exe + [str(small)] + e for n, e in sets.items()}, env, args.runs),
        )
        if args.size_mb:
            show(
                f"log of {big.stat().st_size / 1e6:.0f} MB, best / median of {args.big_runs}:",
                measure({n: exe + [str(big)] + e for n, e in sets.items()}, env, args.big_runs),
            )
        edited = gen / "gen" / "rule-00000.yaml"  # saved by rename: the folder's mtime changes
        edited.with_suffix(".tmp").write_text(edited.read_text() + "# edited\n")
        edited.with_suffix(".tmp").replace(edited)
        wall, cpu, rss = run(exe + [str(small)] + sets[list(sets)[1]], env)
        print(
            f"run after one of the {args.rules} rules was edited (index rebuilt, one file parsed):"
        )
        print(f"  {wall * 1e3:.0f} ms wall, {cpu * 1e3:.0f} ms CPU, {rss:.1f} MiB")
        cache = Path(tmp) / "cache" / "tracelens"
        for f in sorted(cache.glob("rules-*.index")):
            print(f"index file: {f.stat().st_size / 1e6:.1f} MB")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
