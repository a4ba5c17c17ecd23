"""How the TUI's log reader (tab 2) keeps up with a large log: the time to build its lines and
open the tab at the failure, then each key's work (search, next match, level filter, wrap,
next process, page down) with the rows it repaints, on a generated multi-process vLLM log.

A log over the size parsed whole (8 MiB) is parsed around its trouble only; the reader then
reads its file again for every line ("the reader for the diagnosis screen").

Each figure is the best of ``--repeat`` runs, CPU time next to wall time (the machine may be
shared: CPU time is the figure to compare).

    python benchmarks/bench_tui_log.py [--lines 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracelens.engine import parse_path, report  # noqa: E402
from tracelens.tui import make_app  # noqa: E402
from tracelens.tui.loglines import build_lines  # noqa: E402
from tracelens.tui.screens.diagnosis import reader_for  # noqa: E402
from tracelens.tui.screens.logview import LogReader  # noqa: E402
from tracelens.tui.view import from_report  # noqa: E402

LINES = [
    "({p}) INFO 01-20 13:03:41 [loggers.py:123] Engine 000: Avg prompt throughput: 412.3 tokens/s, "
    "Avg generation throughput: 1290.4 tokens/s, Running: 31 reqs, Waiting: 0 reqs, GPU KV cache usage: 41.2%",
    '({p}) INFO:     10.0.3.17:52814 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "({p}) WARNING 01-20 13:03:42 [scheduler.py:261] Sequence group {k} is preempted by PreemptionMode.RECOMPUTE",
    "({p}) DEBUG 01-20 13:03:42 [async_llm.py:261] Added request chatcmpl-{k}.",
]
CRASH = [
    "({p}) ERROR 01-20 13:03:43 [core.py:700] EngineCore failed to start.",
    "({p}) ERROR 01-20 13:03:43 [core.py:700] Traceback (most recent call last):",
    '({p}) ERROR 01-20 13:03:43 [core.py:700]   File "/srv/vllm/v1/engine/core.py", line 691, in run',
    "({p}) ERROR 01-20 13:03:43 [core.py:700]     engine_core = EngineCoreProc(*args, **kwargs)",
    "({p}) ERROR 01-20 13:03:43 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.2 GiB is free.",
]
PROCESSES = ["APIServer pid=48211", "EngineCore_DP0 pid=48377", "Worker_TP0 pid=48530"]


def write_log(path: Path, n: int) -> None:
    out = []
    for k in range(n - len(CRASH)):
        p = PROCESSES[(k // 7) % len(PROCESSES)]
        out.append(LINES[k % len(LINES)].format(p=p, k=k))
    out[n * 2 // 3 : n * 2 // 3] = [c.format(p=PROCESSES[1]) for c in CRASH]
    path.write_text("\n".join(out[:n]) + "\n")


def timed(fn, repeat: int) -> tuple[float, float]:
    """Best (wall, CPU) seconds of ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def paint(view) -> None:
    """The rows on screen, rendered as the next frame would."""
    for y in range(view.size.height):
        view.render_line(y)


def show(name: str, wall: float, cpu: float) -> None:
    print(f"  {name:44} {wall * 1000:9.1f} ms wall {cpu * 1000:9.1f} ms CPU")


async def keys(rep, repeat: int) -> None:
    app = make_app(db_path=Path(tempfile.mkdtemp()) / "none.db", report=rep)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        w, c = time.perf_counter(), time.process_time()
        await pilot.press("2")
        reader = app.screen.query_one(LogReader)
        view = reader.view
        while not reader._opened:
            await pilot.pause()
        paint(view)
        show(
            "open the log tab at the failure (+ paint)",
            time.perf_counter() - w,
            time.process_time() - c,
        )
        if reader.more is not None:
            w, c = time.perf_counter(), time.process_time()
            await app.workers.wait_for_complete()
            await pilot.pause()
            paint(view)
            show(
                "then the whole file, read in the background",
                time.perf_counter() - w,
                time.process_time() - c,
            )
        print(f"  ({len(view.lines):,} lines; the cursor on line {view.current.number:,})")

        def search():
            view._lower = None  # the first search lowers every line once
            view.search("preempted")
            paint(view)

        def step(fn):
            def run():
                fn()
                paint(view)

            return run

        show("search (first query: lowers every line)", *timed(search, repeat))
        show("search again", *timed(step(lambda: view.search("chatcmpl-9")), repeat))
        show("n (next match)", *timed(step(lambda: view.next_match(1)), repeat))
        show(
            "l (warning and above)",
            *timed(step(lambda: (view.set_level(2), view.set_level(0))), repeat),
        )
        show(
            "w (wrap on, then off)",
            *timed(step(lambda: (view.set_wrap(True), view.set_wrap(False))), repeat),
        )
        show("p (next process)", *timed(step(lambda: view.next_process(1)), repeat))
        show("page down", *timed(step(lambda: view.action_page(1)), repeat))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        write_log(log, args.lines)
        size = log.stat().st_size
        rep = report(parse_path(str(log)))
        doc = rep.document
        print(
            f"{args.lines:,} lines, {size / 2**20:.1f} MiB, parsed whole: {doc.full_parse}; best of {args.repeat}"
        )
        show(
            "the reader's lines from the parsed records",
            *timed(lambda: build_lines(doc.records, (), doc.tracebacks, doc.errors), args.repeat),
        )
        show(
            "the reader for the diagnosis screen",
            *timed(lambda: reader_for(from_report(rep)), args.repeat),
        )
        asyncio.run(keys(rep, args.repeat))


if __name__ == "__main__":
    main()
