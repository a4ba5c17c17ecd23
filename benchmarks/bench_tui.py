"""How usable the TUI is with a large store: time until the incident list is on screen with
100,000 incidents, and the time one keystroke in the filter box takes to update the list of
10,000.

    python benchmarks/bench_tui.py [--incidents 100000] [--filter-incidents 10000]
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_similar import fill  # noqa: E402

from tracelens.incidents.store import Store  # noqa: E402
from tracelens.tui import make_app  # noqa: E402
from tracelens.tui.screens.incidents import IncidentsScreen  # noqa: E402


async def startup(db: Path) -> tuple[float, float]:
    """Seconds until the list is on screen (usable), and until every incident is loaded for
    filtering (a background thread)."""
    t0 = time.perf_counter()
    app = make_app(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, IncidentsScreen) or not app.screen.rows:
            await pilot.pause()
        usable = time.perf_counter() - t0
        while len(app.screen.rows) < app.screen.total:
            await pilot.pause(0.02)
        return usable, time.perf_counter() - t0


async def keystrokes(db: Path, text: str) -> list[float]:
    """Per keystroke: the filter handler's work (fuzzy match + table update), then the frame
    that shows it (Textual draws on its next refresh, which the pause waits for)."""
    app = make_app(db_path=db)
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--incidents", type=int, default=100_000)
    ap.add_argument("--filter-incidents", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.db", Path(tmp) / "small.db"
        fill(Store(big), args.incidents)
        fill(Store(small), args.filter_incidents)
        usable, full = asyncio.run(startup(big))
        print(
            f"incident list on screen with {args.incidents} incidents: {usable:.2f} s (all loaded for filtering: {full:.2f} s)"
        )
        times = asyncio.run(keystrokes(small, "cuda memo"))
        ms = sorted(x * 1000 for x in times)
        print(
            f"filter keystroke on {args.filter_incidents} incidents: median {ms[len(ms) // 2]:.0f} ms, worst {ms[-1]:.0f} ms"
        )


if __name__ == "__main__":
    main()
