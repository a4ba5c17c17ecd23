"""End-to-end speed and memory of `tracelens diagnose` on a large vLLM server log.

Builds a realistic log (startup, hundreds of MB of request/metrics lines, one crash near the
end), then times the whole command in a child process and reads its peak RSS, next to
`grep -cE 'ERROR|Traceback'` on the same file. Also times a ~50 KB crash log (the installed ``tracelens`` command, next to a bare Python start).

    python benchmarks/bench_diagnose.py [--size-mb 200] [--runs 3]
"""

from __future__ import annotations

import argparse
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
    _check_bytecode()
    exe = [str(Path(sys.executable).with_name("tracelens")), "diagnose"]
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "server.log"
        build(big, args.size_mb)
        size = big.stat().st_size / 1e6
        print(f"log: {size:.0f} MB, {sum(1 for _ in open(big, 'rb'))} lines")
        for name, cmd in (
            ("tracelens diagnose", exe + [str(big)]),
            ("grep -cE 'ERROR|Traceback'", ["grep", "-cE", "ERROR|Traceback", str(big)]),
        ):
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
        code = (
            "import resource,subprocess,sys;subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
        )
        rss = subprocess.run(
            [sys.executable, "-c", code, *exe, str(big)], capture_output=True, text=True
        )
        print(f"tracelens diagnose peak RSS: {float(rss.stdout):.0f} MiB")
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "crash-50k.log"
        data = SEED.read_bytes()
        small.write_bytes(data[:8000] + data[-42000:])  # startup facts + the crash: ~50 KB
        runs = max(args.runs, 15)
        cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "tracelens diagnose": exe + [str(small)],
        }
        walls: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(runs):  # interleaved, so a slow spell of the machine hits both alike
            for name, cmd in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.PIPE, check=True)
                walls[name].append(time.perf_counter() - t0)
        print(
            f"crash log of {small.stat().st_size / 1e3:.0f} KB, whole command, best / median of {runs}:"
        )
        for name, ts in walls.items():
            ts.sort()
            print(f"  {name:28s} {ts[0] * 1000:5.0f} ms / {ts[len(ts) // 2] * 1000:5.0f} ms")


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
