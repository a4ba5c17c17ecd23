"""Redaction speed: the combined pre-check against running every pattern on every text.

Redacts the lines of a generated vLLM server log (request and metrics lines, no secret), then
the same lines with a secret in one line of 50, and prints lines per second for each, with the
pre-check (what tracelens does) and without it (every pattern on every line).

    python benchmarks/bench_redact.py [--lines 200000]
"""

from __future__ import annotations

import argparse
import time

from tracelens.incidents.redact import Redactor, _sub

CLEAN = [
    "INFO 01-20 13:03:41 [loggers.py:123] Engine 000: Avg prompt throughput: 412.3 tokens/s, "
    "Avg generation throughput: 1290.4 tokens/s, Running: 31 reqs, Waiting: 0 reqs, GPU KV cache usage: 41.2%",
    'INFO:     10.0.3.17:52814 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "INFO 01-20 13:03:42 [async_llm.py:261] Added request chatcmpl-9f3e2a1b7c4d4e0f.",
]
SECRET = (
    "export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEJr"
)


def without_precheck(redactor: Redactor, text: str) -> str:
    for pattern in redactor.patterns:
        text = _sub(pattern, text)
    return text


def rate(fn, lines: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for line in lines:
            fn(line)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000)
    n = ap.parse_args().lines
    clean = [CLEAN[k % len(CLEAN)] for k in range(n)]
    mixed = [SECRET if k % 50 == 0 else line for k, line in enumerate(clean)]
    red = Redactor()
    print(f"{len(red.patterns)} patterns, {n:,} lines, best of 3")
    for name, lines in (("no secret", clean), ("1 line in 50 with secrets", mixed)):
        fast = rate(red, lines)
        slow = rate(lambda t: without_precheck(red, t), lines)
        print(
            f"{name:28} pre-check {fast:12,.0f} lines/s   every pattern {slow:12,.0f} lines/s   x{fast / slow:.1f}"
        )


if __name__ == "__main__":
    main()
