"""CPU time of parsing and of the rules, per log, over the corpus.

Reads every ``corpus/**/*.log`` (and any extra files given) into memory, then times
``engine.parse(bytes)`` and ``engine.report(doc, rules)`` for each log in this one process,
with ``time.process_time`` (CPU seconds, so the load of a shared machine matters little).
Each stage runs over all the logs --loops times per round; the best of --repeat rounds is
kept. Prints ms per log for each stage, the same for each extra file alone, and the load
average before and after. With --profile, a cProfile of both stages over the corpus instead
(sorted by own time).

    python benchmarks/bench_stages.py [--repeat 5] [--loops 2] [--profile] [EXTRA_LOG ...]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best_cpu(fn, repeat: int, loops: int) -> float:
    """Best CPU seconds of ``loops`` calls of ``fn`` over ``repeat`` rounds, per call."""
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        for _ in range(loops):
            fn()
        best = min(best, (time.process_time() - c0) / loops)
    return best


def measure(blobs: list[bytes], rules, repeat: int, loops: int) -> tuple[float, float]:
    """(parse, rules) CPU seconds per log, best of ``repeat``."""
    from tracelens import engine

    docs = [engine.parse(b) for b in blobs]
    parse = best_cpu(lambda: [engine.parse(b) for b in blobs], repeat, loops)
    report = best_cpu(lambda: [engine.report(d, rules) for d in docs], repeat, loops)
    return parse / len(blobs), report / len(blobs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("extra", nargs="*", help="other logs, timed alone too")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--loops", type=int, default=2)
    ap.add_argument("--profile", action="store_true", help="a cProfile instead of the figures")
    opts = ap.parse_args()
    from tracelens import engine
    from tracelens.rulebook.load import default_rules

    rules = default_rules()
    paths = sorted((ROOT / "corpus").glob("**/*.log"))
    blobs = [p.read_bytes() for p in paths]
    if opts.profile:
        prof = cProfile.Profile()
        prof.enable()
        for b in blobs + [Path(x).read_bytes() for x in opts.extra]:
            engine.report(engine.parse(b), rules)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(40)
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    size = sum(len(b) for b in blobs)
    print(
        f"CPU per log, best of {opts.repeat} rounds of {opts.loops} loops "
        f"({len(blobs)} corpus logs, mean {size / len(blobs) / 1e3:.1f} KB):"
    )
    parse, report = measure(blobs, rules, opts.repeat, opts.loops)
    print(f"  corpus       parse {1e3 * parse:6.2f} ms  rules {1e3 * report:6.2f} ms")
    for extra in opts.extra:
        data = Path(extra).read_bytes()
        parse, report = measure([data], rules, opts.repeat, max(opts.loops, 10))
        print(
            f"  {Path(extra).name[:40]:40} ({len(data) / 1e3:.1f} KB)  "
            f"parse {1e3 * parse:6.2f} ms  rules {1e3 * report:6.2f} ms"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
