"""CPU and wall time of folding the per-process copies of tracebacks (``tracelens.parse.fold``),
against the whole parse of the same log.

The fold key normalizes every traceback's message (``tracelens.parse.normalize``); the key
used before read only digits and hex numbers (``--old`` times that one too, for comparison).

    python benchmarks/bench_fold.py [--runs 7] [--old]

Each workload is parsed once without folding; then the fold alone is timed, best of ``--runs``,
CPU (``time.process_time``) next to wall time, on fresh copies of the tracebacks.
"""

from __future__ import annotations

import argparse
import copy
import re
import time
from pathlib import Path
from unittest import mock

from tracelens import engine
from tracelens.parse import document
from tracelens.parse.fold import fold

ROOT = Path(__file__).resolve().parent.parent

REQUEST_TB = """\
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 210, in create
    raise ValueError(f"request {n} has too many tokens")
ValueError: request {n} has too many tokens
"""

RANK_TB = """\
[rank{r}]: Traceback (most recent call last):
[rank{r}]:   File "/workspace/train.py", line 121, in main
[rank{r}]:     model = DDP(model, device_ids=[local_rank])
[rank{r}]: torch.distributed.DistBackendError: NCCL error in: ../NCCLUtils.hpp:317, {long}
[rank{r}]: Error while creating shared memory segment /dev/shm/nccl-{r}{k:05x}Rw (size 9637888)
"""


def workloads() -> dict[str, str]:
    long = "unhandled system error (run with NCCL_DEBUG=INFO for details) " * 16  # ~1 KB
    return {
        "20,000 request tracebacks": "".join(
            REQUEST_TB.replace("{n}", str(k)) for k in range(20_000)
        ),
        "8 ranks x 500 tracebacks, 1 KB messages": "".join(
            RANK_TB.format(r=r, k=k, long=long) for k in range(500) for r in range(8)
        ),
        "the corpus (every log)": "",
    }


_OLD = re.compile(r"0x[0-9a-fA-F]+|\d+")


def old_fold(tracebacks):
    """The parser's fold before one key served the parser and the TUI (digits and hex only)."""
    seen: dict = {}
    out = []
    for tb in tracebacks:
        parts: list = [tb.kind]
        for seg in tb.segments:
            exc = seg.exception
            parts.append(
                (
                    seg.link,
                    exc.type if exc else None,
                    _OLD.sub("N", exc.message) if exc else None,
                    tuple((f.file, f.lineno, f.function) for f in seg.frames),
                )
            )
        key = tuple(parts)
        if key not in seen:
            seen[key] = tb
            out.append(tb)
    return out


def unfolded(text: str) -> list[list]:
    """The tracebacks of a log (or of every corpus log) as parsed, before folding."""
    with mock.patch.object(document, "fold", lambda tbs: tbs):
        if text:
            return [engine.parse(text).tracebacks]
        return [engine.parse_path(str(p)).tracebacks for p in sorted(ROOT.rglob("corpus/**/*.log"))]


def best(fn, groups: list[list], runs: int) -> tuple[float, float, int]:
    cpu = wall = float("inf")
    kept = 0
    for _ in range(runs):
        fresh = [copy.deepcopy(g) for g in groups]
        c0, w0 = time.process_time(), time.perf_counter()
        kept = sum(len(fn(g)) for g in fresh)
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall, kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--old", action="store_true", help="time the previous digits-only key too")
    args = ap.parse_args()
    for name, text in workloads().items():
        c0, w0 = time.process_time(), time.perf_counter()
        groups = unfolded(text)
        parse_cpu, parse_wall = time.process_time() - c0, time.perf_counter() - w0
        total = sum(map(len, groups))
        cpu, wall, kept = best(fold, groups, args.runs)
        print(f"{name}: {total} tracebacks -> {kept} after folding")
        print(f"  parse (once, without fold): {parse_cpu:.3f} s CPU, {parse_wall:.3f} s wall")
        print(f"  fold, best of {args.runs}: {cpu * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall")
        if args.old:
            cpu, wall, kept = best(old_fold, groups, args.runs)
            print(
                f"  previous key, best of {args.runs}: {cpu * 1000:.1f} ms CPU, "
                f"{wall * 1000:.1f} ms wall ({kept} kept)"
            )


if __name__ == "__main__":
    main()
