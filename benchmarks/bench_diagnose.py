"""End-to-end speed and memory of `tracelens diagnose` on a large vLLM server log.

Builds a realistic log (startup, hundreds of MB of request/metrics lines, one crash near the
end), then times the whole command in a child process and reads its peak RSS, next to
`grep -cE 'ERROR|Traceback'` on the same file. Also times a ~50 KB crash log.

    python benchmarks/bench_diagnose.py [--size-mb 200] [--runs 3]
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
    "(APIServer pid=1) INFO:     10.0.{r}.{a}:5{b:04d} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [logger.py:41] Received request chatcmpl-{a}{b}{r}: params: SamplingParams(n=1, temperature=0.7, top_p=1.0, max_tokens=512), prompt_token_ids: None, lora_request: None.\n",
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [async_llm.py:270] Added request chatcmpl-{a}{b}{r}.\n",
]


def build(path: Path, size_mb: int) -> None:
    seed = SEED.read_text().splitlines(keepends=True)
    startup, crash = seed[:120], seed[120:]
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


def run_child(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    # a pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null
    subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    exe = [sys.executable, "-m", "tracelens", "diagnose"]
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "server.log"
        build(big, args.size_mb)
        size = big.stat().st_size / 1e6
        print(f"log: {size:.0f} MB, {sum(1 for _ in open(big, 'rb'))} lines")
        for name, cmd in (("tracelens diagnose", exe + [str(big)]),
                          ("grep -cE 'ERROR|Traceback'", ["grep", "-cE", "ERROR|Traceback", str(big)])):
            walls = []
            for _ in range(args.runs):
                try:
                    wall, _ = run_child(cmd)
                except subprocess.CalledProcessError:
                    wall = float("nan")
                walls.append(wall)
            best = min(walls)
            print(f"{name:28s} best of {args.runs}: {best:6.2f} s  {size / best:7.0f} MB/s")
        # peak RSS of a fresh child only running tracelens
        code = ("import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)")
        rss = subprocess.run([sys.executable, "-c", code, *exe, str(big)], capture_output=True, text=True)
        print(f"tracelens diagnose peak RSS: {float(rss.stdout):.0f} MiB")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        small.write_bytes(data[:8000] + data[-42000:])  # startup facts + the crash: ~50 KB
        walls = {}
        for name, cmd in (("python -c pass", [sys.executable, "-c", "pass"]),
                          ("import pydantic + one model", [sys.executable, "-c", "import pydantic\nclass A(pydantic.BaseModel): x: int\nA(x=1)"]),
                          ("tracelens diagnose", exe + [str(small)])):
            runs = []
            for _ in range(max(args.runs, 7)):
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
                runs.append(time.perf_counter() - t0)
            walls[name] = runs
        print(f"crash log of {small.stat().st_size / 1e3:.0f} KB, whole command, best / median of {len(runs)}:")
        for name, runs in walls.items():
            print(f"  {name:28s} {min(runs) * 1000:5.0f} ms / {sorted(runs)[len(runs) // 2] * 1000:5.0f} ms")


if __name__ == "__main__":
    main()
