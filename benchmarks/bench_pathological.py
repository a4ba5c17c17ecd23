"""Time and memory of `tracelens diagnose --format json` on pathological logs.

Each case is a log built to hit one worst case of a stage (a huge line full of trigger words,
hundreds of thousands of traceback headers, a 100k-frame traceback, a 200 KB structured
payload, a deep chain of nested tracebacks, endless inputs). Every case runs in a child process
with a time limit; the script prints wall time, peak RSS and how the command ended.

    python benchmarks/bench_pathological.py [--limit 120] [--only CASE ...]
    python benchmarks/bench_pathological.py --tree OLD_CHECKOUT   # an older tracelens tree

``--tree`` runs ``python -m tracelens`` from another source tree (e.g. one made with
``git archive``) so the figures before and after a change come from the same machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REQUEST_TB = """\
ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi
    result = await app(  # type: ignore[func-returns-value]
  File "/usr/lib/python3.12/site-packages/starlette/routing.py", line 73, in app
    response = await f(request)
  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 512, in create_chat_completion
    generator = await handler.create_chat_completion(request, raw_request)
  File "/usr/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 210, in create_chat_completion
    raise ValueError(f"request {n} has too many tokens")
ValueError: request {n} has too many tokens
"""


def _write(path: Path, parts) -> None:
    with open(path, "w") as f:
        f.writelines(parts)


def error_line(path: Path) -> None:
    """One 20 MB line of ``ERROR `` repeated."""
    path.write_text("ERROR " * (20_000_000 // 6) + "\n")


def tb_heads(path: Path) -> None:
    """200,000 lines of ``Traceback (most recent call last):``."""
    path.write_text("Traceback (most recent call last):\n" * 200_000)


def request_tracebacks(path: Path) -> None:
    """20,000 request tracebacks from an API server."""
    _write(path, (REQUEST_TB.replace("{n}", str(k)) for k in range(20_000)))


def deep_frames(path: Path) -> None:
    """One traceback of 100,000 frames."""
    frame = '  File "/srv/app/recurse.py", line {k}, in f\n    return f(n - 1)\n'
    _write(
        path,
        [
            "Traceback (most recent call last):\n",
            *(frame.format(k=k % 50 + 1) for k in range(100_000)),
            "RecursionError: maximum recursion depth exceeded\n",
        ],
    )


def _payload(head: str) -> Callable[[Path], None]:
    def build(path: Path) -> None:
        path.write_text(head + "a" * 200_000 + ")\n" + head + "x=" * 100_000 + ")\n")

    build.__doc__ = f"200 KB ``{head.strip()}`` payloads (a run of letters; ``x=`` repeated)."
    return build


def import_pairs(path: Path) -> None:
    """100 repeats of a ``File ...`` / ``ImportError`` pair (once a RecursionError)."""
    pair = '  File "/srv/app/main.py", line 3, in <module>\nImportError: cannot import name x\n'
    path.write_text("Traceback (most recent call last):\n" + pair * 100)


def cr_only(path: Path) -> None:
    """A 5 MB log whose lines end with a bare CR (old Mac style)."""
    line = "INFO 01-20 13:03:40 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s\r"
    path.write_text(line * (5_000_000 // len(line)) + "ERROR 01-20 13:03:41 [core.py:1] boom\r")


CASES: dict[str, Callable[[Path], None]] = {
    "error-line-20MB": error_line,
    "tb-heads-200k": tb_heads,
    "request-tracebacks-20k": request_tracebacks,
    "frames-100k": deep_frames,
    "selector-payload": _payload("AttentionSelectorConfig("),
    "namespace-payload": _payload("INFO args: Namespace("),
    "serverargs-payload": _payload("server_args=ServerArgs("),
    "import-pairs-100": import_pairs,
    "cr-only-5MB": cr_only,
}
SPECIAL = {"dev-zero": "/dev/zero"}


def run(
    cmd: list[str], env: dict, limit: float, cwd: Path
) -> tuple[float, float, float | None, str]:
    """Wall and CPU seconds, peak RSS (MiB) and how the command ended."""
    code = (
        "import resource,subprocess,sys\n"
        "try:\n"
        f"    p=subprocess.run(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.PIPE,timeout={limit})\n"
        "    end=f'rc={p.returncode}'+(' '+p.stderr.decode(errors='replace').strip().splitlines()[-1][:70] if p.stderr.strip() else '')\n"
        "except subprocess.TimeoutExpired:\n"
        f"    end='killed after {limit:.0f} s'\n"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(r.ru_maxrss/1024, r.ru_utime+r.ru_stime)\n"
        "print(end)\n"
    )
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *cmd],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    wall = time.perf_counter() - t0
    lines = out.stdout.splitlines()
    if len(lines) < 2:
        return wall, 0.0, None, "bench error: " + out.stderr.strip()[-80:]
    rss, cpu = map(float, lines[0].split())
    return wall, cpu, rss, lines[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=120, help="seconds before a case is killed")
    ap.add_argument("--tree", help="source tree of the tracelens to measure (default: installed)")
    ap.add_argument("--only", nargs="*", help="cases to run", choices=[*CASES, *SPECIAL])
    args = ap.parse_args()
    env = dict(os.environ)
    # ``python -m`` imports from its working directory first
    cwd = Path(args.tree).resolve() if args.tree else ROOT
    env["PYTHONPATH"] = str(cwd)
    exe = [sys.executable, "-m", "tracelens", "diagnose", "--format", "json"]
    names = args.only or [*CASES, *SPECIAL]
    print(f"{'case':24s} {'size':>8s} {'wall':>8s} {'CPU':>8s} {'peak RSS':>9s}  end")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name in SPECIAL:
                target, size = SPECIAL[name], "-"
            else:
                path = Path(tmp) / f"{name}.log"
                CASES[name](path)
                target, size = str(path), f"{path.stat().st_size / 1e6:.1f}MB"
            wall, cpu, rss, end = run([*exe, target], env, args.limit, cwd)
            rss_s = f"{rss:.0f} MiB" if rss is not None else "?"
            print(f"{name:24s} {size:>8s} {wall:7.1f}s {cpu:7.1f}s {rss_s:>9s}  {end}", flush=True)
            if name not in SPECIAL:
                path.unlink()


if __name__ == "__main__":
    main()
