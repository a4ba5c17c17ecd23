"""`tracelens similar` against a large store: time to rank past incidents for one log, after
start-up (the store is open and the log diagnosed).

Builds a store of N incidents with realistic, varied signatures (different exception types,
messages, frames, rules), then times `similar()` for a few real logs: best and median of
``--runs``, wall and CPU time (the machine may be shared).

    python benchmarks/bench_similar.py [--incidents 1000000] [--store /tmp/big.db] [--runs 7]

``--store PATH`` keeps the store for ``bench_tui.py`` and ``bench_diagnose_store.py`` (they take
the same option); delete it afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracelens.engine import diagnose  # noqa: E402
from tracelens.incidents.similar import similar  # noqa: E402
from tracelens.incidents.store import Store  # noqa: E402

TYPES = [
    "RuntimeError",
    "ValueError",
    "torch.OutOfMemoryError",
    "KeyError",
    "AssertionError",
    "OSError",
    "torch.distributed.DistBackendError",
    "ImportError",
    "TypeError",
    "AttributeError",
]
WORDS = (
    "cuda memory allocate tensor shape device backend attention cache block worker engine rank "
    "nccl timeout socket connect config model token layer weight shard expert kernel launch"
).split()
# real signatures name modules, functions, options and models: a vocabulary of thousands
WORDS += [
    f"{stem}{k}"
    for stem in ("module", "option", "field", "kernel", "op", "param")
    for k in range(500)
]
FUNCS = [
    "forward",
    "profile_run",
    "load_weights",
    "_dummy_run",
    "all_reduce",
    "init_device",
    "execute_model",
    "get_attn_backend_cls",
    "determine_available_memory",
    "capture_model",
    "sample",
    "embedding",
]
RULES = [
    "-",
    "torch/gpu-oom",
    "nccl/watchdog-timeout",
    "vllm/tp-heads-not-divisible",
    "hf/model-not-found",
]


CATEGORIES = {
    "-": "unclassified",
    "torch/gpu-oom": "gpu-oom",
    "nccl/watchdog-timeout": "nccl-timeout",
    "vllm/tp-heads-not-divisible": "config",
    "hf/model-not-found": "model-loading",
}
STATUS = ["open"] * 16 + ["resolved"] * 3 + ["ignored"]


def fill(store: Store, n: int) -> None:
    """``n`` incidents, seen over about a year, in one transaction. The full-text index is
    built once at the end (``rebuild``) instead of row by row, then its triggers come back as
    they were; the counts table is kept by its triggers, as for incidents saved one by one."""
    rnd = random.Random(7)
    start = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp()

    def rows():
        for k in range(n):
            etype = rnd.choice(TYPES)
            msg = " ".join(rnd.choices(WORDS, k=rnd.randint(5, 14))) + f" <n> {k}"
            frames = " > ".join(rnd.sample(FUNCS, 2))
            rule = rnd.choice(RULES)
            seen = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start + k * 31))
            yield (
                f"{k:016x}",
                f"{rule} | {etype} | {msg} | {frames}",
                msg[:80],
                CATEGORIES[rule],
                None if rule == "-" else rule,
                etype,
                msg,
                seen,
                seen,
                rnd.randint(1, 9),
                rnd.choice(STATUS),
            )

    conn = store.db.conn
    conn.execute("PRAGMA cache_size = -1000000")  # 1 GB while filling
    conn.execute("BEGIN")
    fts = (
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%incidents_fts%'"
    )
    triggers = conn.execute(fts).fetchall()
    for name, _sql in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.executemany(
        "INSERT INTO incidents (fingerprint, signature, title, category, rule_id, exception_type, "
        "message, first_seen, last_seen, count, status) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows(),
    )
    conn.execute("INSERT INTO incidents_fts (incidents_fts) VALUES ('rebuild')")
    for _name, sql in triggers:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.execute("PRAGMA cache_size = -2000")


def build(path: Path, n: int) -> None:
    """A store of ``n`` incidents at ``path``, saying how long it took."""
    t0 = time.perf_counter()
    store = Store(path)
    fill(store, n)
    store.close()
    size = path.stat().st_size / 1e6
    print(f"store: {n} incidents, {size:.0f} MB (built in {time.perf_counter() - t0:.0f} s)")


@contextmanager
def big_store(n: int, keep: str | None) -> Iterator[Path]:
    """A store of ``n`` incidents: at ``keep`` (built there when missing, and left there, so
    the other benchmarks can share it), else in a temporary folder deleted afterwards."""
    if keep:
        path = Path(keep)
        if not path.exists():
            build(path, n)
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.db"
        build(path, n)
        yield path


def store_options(ap: argparse.ArgumentParser, default: int) -> None:
    ap.add_argument("--incidents", type=int, default=default, help="size of the store")
    ap.add_argument(
        "--store",
        metavar="PATH",
        help="build the store there (or reuse it) and keep it; default: a temporary one",
    )


def timed(fn, runs: int) -> tuple[list[float], list[float], Any]:
    """Wall and CPU seconds of each of ``runs`` calls, sorted, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return sorted(walls), sorted(cpus), out


def main() -> None:
    ap = argparse.ArgumentParser()
    store_options(ap, 100_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    logs = [
        ROOT / "corpus/incidents/the-fp8-kv-cache-wall.log",
        ROOT / "corpus/captured/gpu/oom-batch-too-large.log",
        ROOT / "corpus/captured/gpu/nccl-watchdog-timeout-stuck-rank.log",
        ROOT / "corpus/shapes/py-chained-cause.log",
    ]
    with big_store(args.incidents, args.store) as path:
        store = Store(path, create=False)
        n = store.count()
        print(f"similar() over {n} incidents, best / median of {args.runs} (wall, CPU):")
        for log in logs:
            rep = diagnose(log.read_bytes())
            walls, cpus, hits = timed(lambda rep=rep: similar(store, rep), args.runs)
            mid = args.runs // 2
            print(
                f"  {log.name:40s} {walls[0] * 1000:6.1f} / {walls[mid] * 1000:6.1f} ms  "
                f"CPU {cpus[0] * 1000:6.1f} / {cpus[mid] * 1000:6.1f} ms  ({len(hits)} hits)"
            )
        store.close()
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
