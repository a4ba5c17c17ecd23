"""The diagnosis screen's log reader (tab 2) and traceback tab (tab 3): Pilot tests for each
key, the lines it is built from, and tracebacks folded across ranks."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Tree
from tui_fixtures import SEED, own_config, own_dirs, run, seed_report  # noqa: F401 (autouse)

from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import Store
from tracelens.tui import make_app
from tracelens.tui.loglines import FILTERS
from tracelens.tui.screens.logview import LogReader

# Pilot walks: the full suite runs them (tests/tiers.py); the snapshots stay in the quick one
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
RANKS = ROOT / "corpus" / "incidents" / "docker-compose-torchrun-ddp-nccl-shm-no-space.log"


def live(tmp_path, log: Path = SEED):
    rep = seed_report() if log == SEED else diagnose(log.read_bytes(), source=log.name)
    return make_app(db_path=tmp_path / "none.db", report=rep), rep


def stored(tmp_path, log: Path, parsed_log: bool = True):
    """An app on a store holding ``log``; without ``parsed_log``, as an older tracelens
    stored it (the excerpt only)."""
    db = tmp_path / "i.db"
    store = Store(db)
    save(store, diagnose(log.read_bytes(), source=log.name), Redactor(), log.name)
    if not parsed_log:
        store.db.execute("DELETE FROM documents")
        store.db.conn.commit()
    store.close()
    return make_app(db_path=db)


async def open_log(pilot, app) -> LogReader:
    await pilot.press("2")
    await pilot.pause()
    return app.screen.query_one(LogReader)


def shown_text(reader: LogReader) -> list[str]:
    """The rows the log view shows now, as text."""
    view = reader.view
    return ["".join(seg.text for seg in view.render_line(y)) for y in range(view.size.height)]


def text_styles(view, y: int) -> list:
    """The styles of a row's text (after the line number, marks and process)."""
    out, x = [], 0
    for seg in view.render_line(y):
        if x >= view.gutter_width:
            out.append(seg.style)
        x += seg.cell_length
    return out


# --- the reader's keys ------------------------------------------------------------------------


def test_opens_on_the_whole_log_at_the_originating_failure(tmp_path):
    app, rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        assert reader.view.has_focus
        assert len(reader.view.lines) == len(rep.document.records) == rep.document.line_count
        assert reader.view.current.number == rep.document.failure_line > 0
        assert any(f"{rep.document.failure_line} " in row for row in shown_text(reader))

    run(app, steps)


def test_slash_searches_and_n_and_shift_n_move_between_matches(tmp_path):
    app, rep = live(tmp_path)
    holding = [r.line for r in rep.document.records if "fp8" in r.text.lower()]

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        await pilot.press("slash", *"FP8", "enter")
        await pilot.pause()
        view = reader.view
        assert [view.lines[view.shown[k]].number for k in view.matches] == holding
        first = view.current.number
        assert first in holding and view.has_focus
        assert f"{view.match_index + 1}/{len(holding)}" in str(reader.status())
        await pilot.press("n")
        second = view.current.number
        assert second in holding and second != first
        assert f"{view.match_index + 1}/{len(holding)}" in str(reader.status())
        await pilot.press("N")
        assert view.current.number == first

    run(app, steps)


def test_a_search_that_finds_nothing_says_so(tmp_path):
    app, _rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        before = reader.view.current.number
        await pilot.press("slash", *"zzqx-not-there", "enter")
        await pilot.pause()
        assert "no match" in str(reader.status())
        assert reader.view.current.number == before

    run(app, steps)


def test_w_wraps_long_lines_and_unwraps_them(tmp_path):
    app, rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        assert view.virtual_size.height == len(view.shown)
        await pilot.press("w")
        await pilot.pause()
        assert view.wrap and view.virtual_size.height > len(view.shown)
        # the failure line (over 600 characters) is on screen whole
        failure = next(r.text for r in rep.document.records if r.line == view.current.number)
        top = view._row_of(view.cursor) - view.scroll_offset.y
        rows = shown_text(reader)[top : top + view._rows[view.cursor + 1] - view._rows[view.cursor]]
        assert len(rows) > 1
        assert "".join(row[view.gutter_width :] for row in rows).rstrip() == failure
        await pilot.press("w")
        await pilot.pause()
        assert not view.wrap and view.virtual_size.height == len(view.shown)

    run(app, steps)


def test_a_long_line_scrolls_sideways_to_its_end(tmp_path):
    app, _rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        tail = view.current.text[-30:]
        assert not any(tail in row for row in shown_text(reader))
        body = view.scrollable_content_region.width - view.gutter_width
        presses = -(-(len(view.current.text) - body) // (body // 4))
        await pilot.press(*["right"] * presses)
        await pilot.pause()
        assert any(tail in row for row in shown_text(reader))
        await pilot.press(*["left"] * presses)
        assert view.scroll_offset.x == 0

    # a wide terminal: a press scrolls by a quarter of the width, so the 710 characters of the
    # line take 13 presses each way instead of 47 (each press waits until the app is idle)
    run(app, steps, size=(200, 24))


@pytest.fixture(scope="module")
def after_l_presses(tmp_path_factory) -> dict[int, dict]:
    """What the log reader keeps after 1, 2 and 3 presses of ``l``, pressed in turn in one run."""
    seen: dict[int, dict] = {}

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        for presses in (1, 2, 3):
            await pilot.press("l")
            await pilot.pause()
            seen[presses] = {
                "kept": [view.lines[k] for k in view.shown],
                "all": len(view.lines),
                "filter": FILTERS[reader._filter],
                "status": str(reader.status()),
            }

    base = tmp_path_factory.mktemp("levels")
    with own_dirs(base):
        run(live(base)[0], steps)
    return seen


@pytest.mark.parametrize(("presses", "least"), [(1, 2), (2, 3), (3, 0)])
def test_l_hides_lines_below_a_level(after_l_presses, presses, least):
    seen = after_l_presses[presses]
    kept = seen["kept"]
    assert all(ln.level >= least or ln.evidence or not ln.number for ln in kept)
    hidden = seen["all"] - len(kept)
    assert (hidden > 0) == (least > 0)
    assert seen["filter"][1] == least
    assert seen["filter"][0] in seen["status"]


@pytest.mark.parametrize(("key", "direction"), [("p", 1), ("P", -1)])
def test_p_jumps_to_another_process(tmp_path, key, direction):
    app, _rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        before = view.current
        await pilot.press(key)
        after = view.current
        assert after.process != before.process
        assert (after.number - before.number) * direction > 0
        # every line between them is the first process's
        lo, hi = sorted((before.number, after.number))
        between = [ln for ln in view.lines if lo < ln.number < hi]
        assert all(ln.process == before.process for ln in between)
        assert after.process in str(reader.status())

    run(app, steps)


def test_the_log_is_drawn_again_in_a_new_theme(tmp_path):
    app, _rep = live(tmp_path)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        y = view.cursor - view.scroll_offset.y  # the failure: an evidence line
        await pilot.press("down")  # the cursor (drawn afresh each time) off it
        before = text_styles(view, y)
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert text_styles(view, y) != before

    run(app, steps)


def test_e_jumps_between_evidence_lines_in_the_log(tmp_path):
    app, rep = live(tmp_path)
    evidence = sorted({e.line for d in rep.diagnoses for e in d.evidence})

    async def steps(pilot, app):
        await pilot.press("e")
        await pilot.pause()
        reader = app.screen.query_one(LogReader)
        seen = []
        for _ in range(len(evidence)):
            seen.append(reader.view.current.number)
            await pilot.press("e")
        assert sorted(seen) == evidence
        marked = [ln.number for ln in reader.view.lines if ln.evidence]
        assert marked == evidence

    run(app, steps)


def test_a_large_log_renders_only_the_rows_on_screen(tmp_path):
    # under the size read whole (8 MiB)
    lines = [f"INFO 01-20 13:03:41 [x.py:1] step {k} " + "x" * (k % 40) for k in range(100_000)]
    lines[70_000] = "RuntimeError: CUDA error: device-side assert triggered"
    rep = diagnose("\n".join(lines).encode(), source="big.log")
    app = make_app(db_path=tmp_path / "none.db", report=rep)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        view = reader.view
        assert len(view.lines) == 100_000
        assert view.current.number == 70_001
        # what was painted: the first screen, then the screen around the failure
        assert len(view._strips) <= 2 * view.size.height
        await pilot.press("end", "slash", *"step 99999", "enter")
        await pilot.pause()
        assert view.current.number == 100_000 and len(view._strips) <= 4 * view.size.height

    run(app, steps)


@pytest.mark.parametrize("readable", [True, False], ids=["file-there", "file-gone"])
def test_a_log_over_the_size_parsed_whole_is_read_whole_from_its_file(tmp_path, readable):
    from tracelens.engine import parse_path, report

    log = tmp_path / "big.log"
    lines = [f"INFO 01-20 13:03:41 [x.py:1] step {k} " + "y" * 60 for k in range(120_000)]
    lines[90_000] = "RuntimeError: CUDA error: device-side assert triggered"
    log.write_text("\n".join(lines) + "\n")
    rep = report(parse_path(str(log)))
    assert not rep.document.full_parse  # the reader reads what the parse skipped
    if not readable:
        log.write_text("changed")
    app = make_app(db_path=tmp_path / "none.db", report=rep)

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        await app.workers.wait_for_complete()  # the file is read in the background
        await pilot.pause()
        numbers = [ln.number for ln in reader.view.lines]
        assert reader.view.current.number == 90_001
        if readable:
            assert numbers == list(range(1, 120_001))
            assert reader.view.lines[1].text == "step 1 " + "y" * 60
        else:
            assert 0 in numbers and len(numbers) < 120_000
            assert "a large log" in str(reader.status())

    run(app, steps)


# --- stored incidents ---------------------------------------------------------------------------


def test_a_stored_incident_shows_its_whole_log_and_its_tracebacks(tmp_path):
    app = stored(tmp_path, RANKS)
    rep = diagnose(RANKS.read_bytes())

    async def steps(pilot, app):
        await pilot.press("enter")
        await pilot.pause()
        reader = await open_log(pilot, app)
        assert [ln.number for ln in reader.view.lines] == [r.line for r in rep.document.records]
        await pilot.press("3")
        await pilot.pause()
        labels = [str(n.label) for n in app.screen.query_one(Tree).root.children]
        assert len(labels) == 2  # four ranks' copies of one traceback, then torchrun's
        assert labels[0].startswith("[ranks 0-3 · 4 copies · line 9]")
        assert "DistBackendError" in labels[0]

    run(app, steps)


def test_an_incident_stored_before_keeps_showing_its_excerpt(tmp_path):
    app = stored(tmp_path, RANKS, parsed_log=False)

    async def steps(pilot, app):
        await pilot.press("enter")
        await pilot.pause()
        reader = await open_log(pilot, app)
        numbers = [ln.number for ln in reader.view.lines]
        assert 0 in numbers  # a marker where the excerpt skips lines
        assert "stored excerpt" in str(reader.status())
        await pilot.press("3")
        await pilot.pause()
        labels = [str(n.label) for n in app.screen.query_one(Tree).root.children]
        assert labels == [
            "this incident was stored without its parsed log (by an older tracelens); "
            "see the excerpt in tab 2"
        ]

    run(app, steps)


def test_help_lists_the_log_keys(tmp_path):
    async def steps(pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        table = app.screen.table()
        keys = {str(row) for row in table.columns[0].cells}
        what = " ".join(str(c) for c in table.columns[1].cells)
        assert {"/", "n", "N", "w", "l", "p", "P"} <= keys
        assert "Log (tab 2)" in keys
        assert "next line of another process" in what

    run(make_app(db_path=tmp_path / "none.db"), steps)


# --- a move of the cursor draws what it changes --------------------------------------------

MOVES = [
    # (the move, its keys, whether the view scrolls)
    ("down", ["down"], False),
    ("down three times", ["down", "down", "down"], False),
    ("up", ["up"], False),
    ("page down", ["pagedown"], True),
    ("next evidence", ["e"], True),
    ("wrap, then down", ["w", "down"], True),
    ("last line", ["end"], True),
    ("first line", ["home"], True),
]


@pytest.fixture(scope="module")
def moves(tmp_path_factory) -> dict:
    """One run through MOVES in the log tab; after each: the screen as drawn (each row's
    segments, with their styles), the screen drawn again whole, and how many times the screen
    was laid out during the move."""
    seen: dict = {}
    base = tmp_path_factory.mktemp("moves")
    layouts: list[int] = []

    async def steps(pilot, app):
        reader = await open_log(pilot, app)
        refresh_layout = type(app.screen)._refresh_layout

        def counted(screen, *args, **kwargs):
            layouts.append(1)
            return refresh_layout(screen, *args, **kwargs)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(type(app.screen), "_refresh_layout", counted)
            for name, keys, _scrolls in MOVES:
                layouts.clear()
                await pilot.press(*keys)
                await pilot.pause()
                drawn, laid_out = list(app.screen._compositor.render_strips()), len(layouts)
                reader.view.refresh()
                await pilot.pause()
                seen[name] = (drawn, list(app.screen._compositor.render_strips()), laid_out)

    with own_dirs(base):
        run(live(base)[0], steps, size=(100, 30))
    return seen


@pytest.mark.parametrize("name, keys, scrolls", MOVES)
def test_a_move_in_the_log_draws_the_rows_it_changes(moves, name, keys, scrolls):
    drawn, whole, laid_out = moves[name]
    assert drawn == whole  # no row left with the cursor it had, or without the one it has
    if not scrolls:
        assert laid_out == 0  # the status line changes, its size does not
