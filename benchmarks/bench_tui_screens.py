"""What opening each screen of the TUI costs: the app's first screen (the incident list), a
stored incident's diagnosis screen, each of its other tabs, the log reader (tab 2, the key
``e`` that jumps to the evidence), the rules browser, and going back. The same steps a user
takes, on a small store of six corpus logs (the TUI tests' store), in a headless terminal.

Each step is timed from the key to the app being idle with the screen drawn (what a Pilot
test waits for), in CPU time (the process's, threads included) and wall time, best and median
of ``--runs`` app runs (the machine may be shared: CPU time is the figure to compare). Then
the widgets each screen holds (``walk_children``, the screen itself included), the widgets
styled while a step ran (calls of ``Stylesheet.apply``) and the CSS rules of the app.

    python benchmarks/bench_tui_screens.py [--runs 7] [--size 80x24] [--animations none]
        [--styled]
        [--profile N [--step diagnosis] [--sort cumulative] [--dump FILE]]

``--profile N`` prints the N costliest functions (cProfile; ``--sort cumulative`` or
``tottime``) of one step instead (``--step``: a part of its name, by default the diagnosis
screen's opening); ``--dump FILE`` keeps the profile for ``pstats``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import textual.constants  # noqa: E402
from textual.css.stylesheet import Stylesheet  # noqa: E402

from tracelens.engine import diagnose  # noqa: E402
from tracelens.incidents.incident import save  # noqa: E402
from tracelens.incidents.redact import Redactor  # noqa: E402
from tracelens.incidents.store import Store  # noqa: E402
from tracelens.tui import make_app  # noqa: E402
from tracelens.tui.screens.diagnosis import DiagnosisScreen  # noqa: E402
from tracelens.tui.screens.incidents import IncidentsScreen  # noqa: E402
from tracelens.tui.screens.rules import RulesScreen  # noqa: E402

LOGS = [
    "corpus/incidents/the-fp8-kv-cache-wall.log",
    "corpus/captured/gpu/oom-batch-too-large.log",
    "corpus/captured/gpu/nccl-duplicate-gpu.log",
    "corpus/captured/gpu/device-assert-embedding.log",
    "corpus/captured/vllm/serve-port-in-use.log",
    "corpus/captured/vllm/serve-tp-not-dividing-heads.log",
]

STYLED: Counter[str] = Counter()
"""Widgets styled (``Stylesheet.apply`` calls) while the step named by the key ran."""
STYLED_KINDS: Counter[tuple[str, str]] = Counter()
"""The same by step and widget class."""
_apply = Stylesheet.apply
_step = [""]


def _counted_apply(self, node, *args, **kwargs):
    STYLED[_step[0]] += 1
    STYLED_KINDS[_step[0], type(node).__name__] += 1
    return _apply(self, node, *args, **kwargs)


def build_store(path: Path) -> None:
    store = Store(path)
    for k, name in enumerate(LOGS):
        log = ROOT / name
        rep = diagnose(log.read_bytes(), source=log.name)
        save(store, rep, Redactor(), log.name, seen_at=f"2025-06-{k + 1:02d}T10:00:00+00:00")
    store.close()


def widgets(screen) -> int:
    return len(list(screen.walk_children(with_self=True)))


async def walk(
    db: Path,
    base: Path,
    size: tuple[int, int],
    figures: dict,
    counts: dict,
    profile: tuple[cProfile.Profile, str] | None = None,
) -> None:
    """One app run through every step; each step's (wall, CPU) appended to ``figures``."""
    app = make_app(db_path=db, settings_path=base / "tui.json")
    t0 = (time.perf_counter(), time.process_time())
    _step[0] = "first screen (incident list)"
    first = profile[0] if profile and profile[1] in _step[0] else None
    if first is not None:
        first.enable()
    async with app.run_test(size=size) as pilot:
        while not isinstance(app.screen, IncidentsScreen) or not app.screen.rows:
            await pilot.pause()
        await pilot.pause()
        if first is not None:
            first.disable()
        figures.setdefault(_step[0], []).append(
            (time.perf_counter() - t0[0], time.process_time() - t0[1])
        )
        counts["incident list"] = widgets(app.screen)

        async def step(name: str, act: Callable[[], Awaitable[None]]) -> None:
            _step[0] = name
            prof = profile[0] if profile and profile[1] in name else None
            t = (time.perf_counter(), time.process_time())
            if prof is not None:
                prof.enable()
            await act()
            await pilot.pause()
            if prof is not None:
                prof.disable()
            figures.setdefault(name, []).append(
                (time.perf_counter() - t[0], time.process_time() - t[1])
            )

        async def open_incident() -> None:
            await pilot.press("enter")
            while not isinstance(app.screen, DiagnosisScreen):
                await pilot.pause()

        await step("open a diagnosis screen (enter)", open_incident)
        counts["diagnosis screen, opened"] = widgets(app.screen)
        for key, tab in (("2", "log"), ("3", "traceback"), ("4", "facts"), ("5", "similar")):
            await step(f"tab {key} ({tab})", lambda key=key: pilot.press(key))
        await step("tab 1 (diagnosis) again", lambda: pilot.press("1"))
        await step("e: evidence in the log", lambda: pilot.press("e"))
        await step("log: 10 x down", lambda: pilot.press(*["down"] * 10))
        counts["diagnosis screen, every tab shown"] = widgets(app.screen)
        await step("back to the list (escape)", lambda: pilot.press("escape"))

        async def rules() -> None:
            await pilot.press("r")
            while not isinstance(app.screen, RulesScreen):
                await pilot.pause()
            await pilot.pause()

        await step("rules browser (r)", rules)
        counts["rules browser"] = widgets(app.screen)
        await step("back to the list (escape) ", lambda: pilot.press("escape"))
        counts["CSS rules of the app"] = len(app.stylesheet.rules)
    _step[0] = ""


def show(name: str, runs: list[tuple[float, float]], styled: float) -> None:
    walls, cpus = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
    mid = len(runs) // 2
    print(
        f"  {name:34s} CPU {cpus[0] * 1000:6.0f} / {cpus[mid] * 1000:6.0f} ms   "
        f"wall {walls[0] * 1000:6.0f} / {walls[mid] * 1000:6.0f} ms   styled {styled:5.0f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--size", default="80x24", help="terminal COLUMNSxROWS")
    ap.add_argument("--profile", type=int, metavar="N", help="profile one step")
    ap.add_argument("--step", default="diagnosis", help="the step to profile (part of its name)")
    ap.add_argument("--sort", default="cumulative", help="pstats order (cumulative, tottime)")
    ap.add_argument("--dump", type=Path, help="write the profile to this file")
    ap.add_argument("--styled", action="store_true", help="list the widgets styled per step")
    ap.add_argument(
        "--animations",
        default="none",
        choices=["none", "basic", "full"],
        help="Textual's animation level (the tests run with none; a user's default is full)",
    )
    args = ap.parse_args()
    cols, rows = (int(x) for x in args.size.split("x"))
    # each App takes its animation level from textual.constants when it is made
    textual.constants.TEXTUAL_ANIMATIONS = args.animations  # type: ignore[misc]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        db = base / "incidents.db"
        build_store(db)
        Stylesheet.apply = _counted_apply  # type: ignore[method-assign]
        figures: dict[str, list[tuple[float, float]]] = {}
        counts: dict[str, int] = {}
        asyncio.run(walk(db, base, (cols, rows), {}, {}))  # warm: imports, CSS parsed
        STYLED.clear()
        STYLED_KINDS.clear()
        if args.profile:
            prof = cProfile.Profile()
            asyncio.run(walk(db, base, (cols, rows), figures, counts, (prof, args.step)))
            if args.dump:
                prof.dump_stats(args.dump)
            pstats.Stats(prof).sort_stats(args.sort).print_stats(args.profile)
            return
        for _ in range(args.runs):
            asyncio.run(walk(db, base, (cols, rows), figures, counts))
    print(
        f"TUI screens at {cols}x{rows}, {len(LOGS)} incidents, animations {args.animations}; "
        f"CPU and wall best / median of {args.runs} app runs; widgets styled per run"
    )
    for name, runs in figures.items():
        show(name, runs, STYLED[name] / args.runs)
    if args.styled:
        for (name, kind), n in sorted(STYLED_KINDS.items()):
            print(f"    {name:34s} {kind:24s} {n / args.runs:5.0f}")
    print("widgets on each screen (the screen included), CSS rules:")
    for name, n in counts.items():
        print(f"  {name:34s} {n:6d}")
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
