"""`tracelens similar` against a large store: time to rank past incidents for one log, after
start-up (the store is open and the log diagnosed).

Builds a store of N incidents with realistic, varied signatures (different exception types,
messages, frames, rules), then times `similar()` for a few real logs.

    python benchmarks/bench_similar.py [--incidents 100000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracelens.engine import diagnose  # noqa: E402
from tracelens.incidents.similar import similar  # noqa: E402
from tracelens.incidents.store import Store, now  # noqa: E402

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


def fill(store: Store, n: int) -> None:
    rnd = random.Random(7)
    rows = []
    for k in range(n):
        etype = rnd.choice(TYPES)
        msg = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 14))) + f" <n> {k}"
        frames = " > ".join(rnd.sample(FUNCS, 2))
        rule = rnd.choice(RULES)
        rows.append(
            {
                "fingerprint": f"{k:016x}",
                "signature": f"{rule} | {etype} | {msg} | {frames}",
                "title": msg[:80],
                "category": "gpu-oom",
                "rule_id": None if rule == "-" else rule,
                "exception_type": etype,
                "message": msg,
                "first_seen": now(),
                "last_seen": now(),
                "count": rnd.randint(1, 9),
                "status": "open",
            }
        )
    store.db["incidents"].insert_all(rows, batch_size=5000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=100_000)
    args = ap.parse_args()
    logs = [
        ROOT / "corpus/incidents/the-fp8-kv-cache-wall.log",
        ROOT / "corpus/captured/gpu/oom-batch-too-large.log",
        ROOT / "corpus/captured/gpu/nccl-watchdog-timeout-stuck-rank.log",
        ROOT / "corpus/shapes/py-chained-cause.log",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "big.db")
        t0 = time.perf_counter()
        fill(store, args.incidents)
        print(
            f"store: {store.db['incidents'].count} incidents (filled in {time.perf_counter() - t0:.1f} s)"
        )
        for log in logs:
            rep = diagnose(log.read_bytes())
            times = []
            for _ in range(5):
                t = time.perf_counter()
                hits = similar(store, rep)
                times.append(time.perf_counter() - t)
            print(
                f"{log.name:45s} best {min(times) * 1000:6.1f} ms  median {sorted(times)[2] * 1000:6.1f} ms  ({len(hits)} hits)"
            )


if __name__ == "__main__":
    main()
