"""How usable the TUI is with a large store: time until the incident list is on screen (the
first page, the counts and the category list), a status and a category filter on the whole
store, reading every incident for the word filter, and one keystroke in the filter box on a
smaller store.

    python benchmarks/bench_tui.py [--incidents 1000000] [--store /tmp/big.db] [--runs 5]
        [--filter-incidents 10000] [--full-load]

Each figure is wall time and the process's CPU time (the machine may be shared), best and
median of ``--runs`` where it says so. ``--store`` shares the store with ``bench_similar.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_similar import big_store, build, store_options  # noqa: E402
from textual.widgets import Select  # noqa: E402

from tracelens.tui import make_app  # noqa: E402
from tracelens.tui.screens.incidents import IncidentsScreen  # noqa: E402


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(t: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - t[0], time.process_time() - t[1]


async def first_screen(db: Path, filters: bool) -> dict[str, tuple[float, float]]:
    """Until the list is on screen; then (``filters``) a status and a category filter, each
    until its rows and count are drawn."""
    out = {}
    t = clocks()
    app = make_app(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, IncidentsScreen) or not app.screen.rows:
            await pilot.pause()
        out["first screen"] = since(t)
        if filters:
            screen = app.screen
            for name, widget, value in (
                ("status filter (resolved)", "#status", "resolved"),
                ("category filter (nccl-timeout)", "#category", "nccl-timeout"),
            ):
                t = clocks()
                screen.query_one(widget, Select).value = value
                await pilot.pause()
                out[name] = since(t)
                screen.query_one(widget, Select).value = Select.NULL
                await pilot.pause()
    return out


async def full_load(db: Path) -> tuple[float, float]:
    """From the first filter keystroke until every incident is read (in pages, in a thread)."""
    app = make_app(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        t = clocks()
        screen.query_one("#filter").value = "c"
        while not screen.complete:
            await pilot.pause(0.05)
        return since(t)


async def keystrokes(db: Path, text: str) -> list[float]:
    """Per keystroke, every incident read: the filter handler's work (match + table update),
    then the frame that shows it (Textual draws on its next refresh, which the pause waits for)."""
    app = make_app(db_path=db)
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen._load_all()
        while not screen.complete:
            await pilot.pause(0.05)
        box = screen.query_one("#filter")
        for k in range(1, len(text) + 1):
            t = time.perf_counter()
            with box.prevent(box.Changed):
                box.value = text[:k]
            screen.refresh_table()
            app.screen._refresh_layout()  # lay out and render now, as the next frame would
            out.append(time.perf_counter() - t)
            await pilot.pause()
        assert screen.query_one("#count").render()
    return out


def show(name: str, runs: list[tuple[float, float]]) -> None:
    walls, cpus = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
    mid = len(runs) // 2
    print(
        f"  {name:32s} wall {walls[0]:5.2f} / {walls[mid]:5.2f} s   "
        f"CPU {cpus[0]:5.2f} / {cpus[mid]:5.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    store_options(ap, 1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--filter-incidents", type=int, default=10_000)
    ap.add_argument("--full-load", action="store_true", help="also read every incident")
    args = ap.parse_args()
    with big_store(args.incidents, args.store) as big:
        runs: dict[str, list[tuple[float, float]]] = {}
        for k in range(args.runs):
            for name, figure in asyncio.run(first_screen(big, filters=k == 0)).items():
                runs.setdefault(name, []).append(figure)
        print(f"TUI with {args.incidents} incidents, best / median of {args.runs}:")
        for name, figures in runs.items():
            show(name, figures)
        if args.full_load:
            show("every incident read", [asyncio.run(full_load(big))])
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.db"
        build(small, args.filter_incidents)
        ms = sorted(x * 1000 for x in asyncio.run(keystrokes(small, "cuda memo")))
        print(
            f"filter keystroke on {args.filter_incidents} incidents: "
            f"median {ms[len(ms) // 2]:.0f} ms, worst {ms[-1]:.0f} ms"
        )
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
