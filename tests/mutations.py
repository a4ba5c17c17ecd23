"""Mutations of corpus logs for fuzzing: byte flips, cuts, duplicated lines, envelope prefixes,
bare-CR line ends, spliced logs. Shared by tests/test_fuzz.py (a short hypothesis run in CI)
and benchmarks/fuzz_corpus.py (a long run). Every mutation is reproducible from a
``random.Random`` and keeps an input within a few times its log's size."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import cache
from pathlib import Path

from corpus_expect import corpus_logs

ROOT = Path(__file__).resolve().parent.parent
LOGS: list[Path] = corpus_logs()
"""Every corpus log, read when a mutation first picks it (reading all of them is a quarter of a
second of every test process's collection)."""


@cache
def _bytes(path: Path) -> bytes:
    return path.read_bytes()


# envelopes the reader peels, and a few it must not be fooled by
PREFIXES = [
    b"(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] ",
    b"(Worker_TP1 pid=9) ",
    b"[rank3]: ",
    b"[default0]:",
    b"2025-09-14T08:01:10.120431786Z ",
    b"vllm03  | ",
    b"[pod/vllm-0/vllm] ",
    b"E0120 13:03:50.123456 1234 ProcessGroupNCCL.cpp:1234] ",
    b"[2025-01-20 13:03:50 TP0] ",
    b"Nov 29 03:14:12 gpu-node-7 python3[48211]: ",
    b"[1,0]<stderr>:",
    b"   12\t",
    b"\x1b[1;31m",
    b"ERROR:root:",
    b"| ",
    b"+ ",
    b"    ",
]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [data]


def flip_bytes(data: bytes, rnd: random.Random) -> bytes:
    """A few bytes set to random values (control bytes, invalid UTF-8 ...)."""
    if not data:
        return bytes([rnd.randrange(256)])
    out = bytearray(data)
    for _ in range(rnd.randint(1, 16)):
        out[rnd.randrange(len(out))] = rnd.randrange(256)
    return bytes(out)


def truncate(data: bytes, rnd: random.Random) -> bytes:
    """The log cut at both ends, anywhere (mid-line, mid-character)."""
    a, b = sorted(rnd.randrange(len(data) + 1) for _ in range(2))
    return data[a:] if rnd.random() < 0.3 else data[a:b] if rnd.random() < 0.5 else data[:b]


def duplicate_lines(data: bytes, rnd: random.Random) -> bytes:
    """A line or a block of lines repeated (a traceback printed by many workers, a retry loop)."""
    lines = _lines(data)
    a = rnd.randrange(len(lines))
    b = min(len(lines), a + rnd.choice([1, 1, 2, 5, 30]))
    times = rnd.choice([2, 10, 100, 1000]) if b - a == 1 else rnd.choice([2, 5, 20])
    block = b"".join(lines[a:b])
    times = max(2, min(times, (1 << 20) // max(1, len(block))))  # at most about 1 MiB more
    return b"".join(lines[:a]) + block * times + b"".join(lines[b:])


def add_prefixes(data: bytes, rnd: random.Random) -> bytes:
    """An envelope put before every line, before some lines, or twice."""
    lines = _lines(data)
    prefix = rnd.choice(PREFIXES)
    if rnd.random() < 0.3:
        prefix += rnd.choice(PREFIXES)
    share = rnd.choice([1.0, 0.5, 0.05])
    return b"".join(prefix + ln if rnd.random() < share else ln for ln in lines)


def bare_cr_line_ends(data: bytes, rnd: random.Random) -> bytes:
    """Line ends turned into bare CRs (classic Mac OS), everywhere or in part of the log."""
    if rnd.random() < 0.5:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    cut = rnd.randrange(len(data) + 1)
    return data[:cut] + data[cut:].replace(b"\n", b"\r")


def splice(data: bytes, rnd: random.Random) -> bytes:
    """Part of another corpus log inserted at a line start."""
    other = _bytes(rnd.choice(LOGS))
    lines = _lines(data)
    a = rnd.randrange(len(lines) + 1)
    x, y = sorted(rnd.randrange(len(other) + 1) for _ in range(2))
    return b"".join(lines[:a]) + other[x:y] + b"\n" + b"".join(lines[a:])


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    f.__name__: f
    for f in (flip_bytes, truncate, duplicate_lines, add_prefixes, bare_cr_line_ends, splice)
}
MAX_SIZE = 4 << 20
"""Mutations stop once an input passes this size (duplication compounds)."""


def mutant(rnd: random.Random, steps: int) -> tuple[str, list[str], bytes]:
    """A random corpus log with ``steps`` random mutations: (log, mutation names, bytes)."""
    path = rnd.choice(LOGS)
    name, data = str(path.relative_to(ROOT)), _bytes(path)
    applied: list[str] = []
    for _ in range(steps):
        if len(data) > MAX_SIZE:
            break
        op = rnd.choice(sorted(MUTATIONS))
        data = MUTATIONS[op](data, rnd)
        applied.append(op)
    return name, applied, data


def from_seed(seed: int) -> tuple[str, list[str], bytes]:
    """The input of a fuzzing run's seed: one to four mutations of a corpus log."""
    rnd = random.Random(seed)
    return mutant(rnd, rnd.randint(1, 4))
