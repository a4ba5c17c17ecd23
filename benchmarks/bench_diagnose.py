"""End-to-end speed and memory of `tracelens diagnose` on a large vLLM server log.

Builds a realistic log (startup, hundreds of MB of request/metrics lines, one crash near the
end), then times the whole command in a child process, next to `grep -cE 'ERROR|Traceback'`
on the same file, interleaved (a slow spell of the shared machine hits both alike): wall time
and CPU time (user + system of the command and the processes it waits for), best of N, for
each scanning engine (Hyperscan, and RE2 forced with TRACELENS_SCAN_ENGINE=re2). Then the peak
RSS of the command on logs of several sizes (each built, measured and deleted in turn), and a
~50 KB crash log, whole command, next to a bare Python start.

    python benchmarks/bench_diagnose.py [--size-mb 200] [--runs 5] [--rss-mb 50,200,1024]
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
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"

LINES = [
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: {a}.0 tokens/s, Avg generation throughput: {b}.2 tokens/s, Running: {r} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.{r}%, Prefix cache hit rate: 52.1%\n",
    '(APIServer pid=1) INFO:     10.0.{r}.{a}:5{b:04d} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n',
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [logger.py:41] Received request chatcmpl-{a}{b}{r}: params: SamplingParams(n=1, temperature=0.7, top_p=1.0, max_tokens=512), prompt_token_ids: None, lora_request: None.\n",
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [async_llm.py:270] Added request chatcmpl-{a}{b}{r}.\n",
]


def build(path: Path, size_mb: int) -> None:
    seed = SEED.read_text().splitlines(keepends=True)
    # the server's start-up, then requests, then the crash: the seed cut at its first error line
    # (until 2026-12-02 it was cut after line 120, inside the crash's tracebacks, which put
    # 200 MB of requests between a traceback's header and its frames: no server prints that)
    cut = next(k for k, line in enumerate(seed) if " ERROR " in line or "Traceback" in line)
    startup, crash = seed[:cut], seed[cut:]
    target = size_mb << 20
    with open(path, "w") as f:
        f.writelines(startup)
        written, k = 0, 0
        block = []
        while written < target:
            line = LINES[k % 4].format(m=k // 60 % 60, s=k % 60, a=k % 97, b=k % 8191, r=k % 13)
            block.append(line)
            written += len(line)
            k += 1
            if len(block) == 5000:
                f.writelines(block)
                block = []
        f.writelines(block)
        f.writelines(crash)


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of a child process (CPU: user + system, its own children too)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # a pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null
    subprocess.run(cmd, stdout=subprocess.PIPE, check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def peak_rss(cmd: list[str]) -> float:
    """Peak RSS (MiB) of the largest process of a command, run under a fresh Python."""
    code = (
        "import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
    )
    out = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True)
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rss-mb", default="50,200,1024", help="log sizes for peak RSS ('' for none)")
    args = ap.parse_args()
    _check_bytecode()
    exe = [str(Path(sys.executable).with_name("tracelens")), "diagnose"]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "server.log"
        build(big, args.size_mb)
        size = big.stat().st_size / 1e6
        print(f"log: {size:.0f} MB, {sum(1 for _ in open(big, 'rb'))} lines")
        subprocess.run(exe + [str(big)], stdout=subprocess.PIPE)  # warm the caches
        re2_env = {**os.environ, "TRACELENS_SCAN_ENGINE": "re2"}
        cmds: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "tracelens diagnose": (exe + [str(big)], None),
            "  with TRACELENS_SCAN_ENGINE=re2": (exe + [str(big)], re2_env),
            "grep -cE 'ERROR|Traceback'": (["grep", "-cE", "ERROR|Traceback", str(big)], None),
        }
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        cpus: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(args.runs):  # interleaved
            for name, (cmd, env) in cmds.items():
                wall, cpu = run_child(cmd, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
        print(f"best of {args.runs}, interleaved:      wall      MB/s    CPU")
        for name in cmds:
            best = min(walls[name])
            print(f"  {name:34s} {best:6.3f} s {size / best:6.0f} {min(cpus[name]):6.3f} s")
        grep_wall = min(walls["grep -cE 'ERROR|Traceback'"])
        for name in list(cmds)[:2]:
            print(f"  {name.strip():34s} {grep_wall / min(walls[name]):.2f}x grep's speed (wall)")
    for mb in [int(x) for x in args.rss_mb.split(",") if x]:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "server.log"
            build(log, mb)
            print(
                f"peak RSS on {log.stat().st_size / 1e6:5.0f} MB: {peak_rss(exe + [str(log)]):4.0f} MiB"
            )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        small.write_bytes(data[:8000] + data[-42000:])  # startup facts + the crash: ~50 KB
        runs = max(args.runs, 15)
        small_cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "tracelens diagnose": exe + [str(small)],
        }
        small_walls: dict[str, list[float]] = {name: [] for name in small_cmds}
        small_cpus: dict[str, list[float]] = {name: [] for name in small_cmds}
        for _ in range(runs):  # interleaved, so a slow spell of the machine hits both alike
            for name, cmd in small_cmds.items():
                wall, cpu = run_child(cmd)
                small_walls[name].append(wall)
                small_cpus[name].append(cpu)
        print(
            f"crash log of {small.stat().st_size / 1e3:.0f} KB, whole command, "
            f"best / median of {runs} (wall; CPU best):"
        )
        for name, ts in small_walls.items():
            ts.sort()
            print(
                f"  {name:28s} {ts[0] * 1000:5.0f} ms / {ts[len(ts) // 2] * 1000:5.0f} ms"
                f"  CPU {min(small_cpus[name]) * 1000:5.0f} ms"
            )


def _check_bytecode() -> None:
    """Say so when tracelens runs from source without cached bytecode (an editable install with
    PYTHONDONTWRITEBYTECODE set): every run would then compile it, which a user's install does
    not do."""
    import importlib.util

    import tracelens.cli.app

    if not Path(importlib.util.cache_from_source(tracelens.cli.app.__file__)).exists():
        print(
            "note: tracelens has no cached bytecode here, so each run compiles it; "
            "measure a regular install (pip install .) for users' figures"
        )


if __name__ == "__main__":
    main()
