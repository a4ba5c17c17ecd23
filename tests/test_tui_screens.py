"""Layouts that hold at 80x24 and on wide terminals, the ticket export that says where it
writes, the theme remembered across runs, the attached ticket in the incident's header."""

from __future__ import annotations

import json

import pytest
from textual.widgets import DataTable, Input, Static
from tui_fixtures import (  # noqa: F401 (own_config: autouse)
    make_store,
    notes,
    own_config,
    own_dirs,
    run,
    seed_report,
)

from tracelens.incidents.store import Store
from tracelens.tui import make_app
from tracelens.tui.screens.diagnosis import DiagnosisScreen
from tracelens.tui.screens.dialogs import ExportScreen
from tracelens.tui.screens.incidents import IncidentsScreen
from tracelens.tui.settings import default_settings_path

# Pilot walks: the full suite runs them (tests/tiers.py); the snapshots stay in the quick one
pytestmark = pytest.mark.slow


@pytest.fixture()
def db(tmp_path):
    return make_store(tmp_path / "incidents.db")


# layouts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, title_at_least", [((80, 24), 36), ((120, 40), 55), ((200, 50), 130)]
)
def test_the_title_column_takes_what_the_others_leave(db, size, title_at_least):
    async def steps(pilot, app):
        table = app.screen.query_one(DataTable)
        widths = {str(c.key.value): c.width for c in table.columns.values()}
        assert widths["title"] >= title_at_least
        assert sum(w + 2 for w in widths.values()) <= size[0] - 2  # cell padding, scrollbar
        titles = [str(table.get_row_at(k)[4]) for k in range(table.row_count)]
        stored = {r.title for r in Store(db).incidents()}
        for t in titles:  # whole where they fit, else cut with an ellipsis
            assert t in stored or (t.endswith("…") and len(t) == widths["title"])

    run(make_app(db_path=db), steps, size=size)


@pytest.mark.parametrize(
    "size, category",
    [((80, 24), "none"), ((120, 40), "cut at 22"), ((200, 50), "whole ids, the rest")],
)
def test_rules_browser_category_column(tmp_path, size, category):
    """The issue's rules browser gave the category 5 characters; now it has room or is left to
    the rule pane, which names it. On a wide screen every rule id is whole and the category takes
    what is left (whole, or cut to no fewer than 22 when the longest id needs the room)."""

    async def steps(pilot, app):
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        table = screen.query_one(DataTable)
        widths = {str(c.key.value): c.width for c in table.columns.values()}
        longest = max(len(lr.rule.category) for lr in screen.rules)
        longest_id = max(len(lr.rule.id) for lr in screen.rules)
        if category == "whole ids, the rest":
            assert widths["rule"] == longest_id
            assert 22 <= widths["category"] <= longest
        else:
            assert widths.get("category") == {"none": None, "cut at 22": 22}[category]
        assert widths["rule"] >= 30

    run(make_app(db_path=tmp_path / "none.db"), steps, size=size)


# ticket export ----------------------------------------------------------------------------------


def test_export_shows_a_full_default_path_and_says_where_it_wrote(db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    async def steps(pilot, app):
        await pilot.press("enter", "t")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        inc_id = dialog.view.incident.id
        path = dialog.query_one("#path", Input)
        expected = tmp_path.resolve() / f"tracelens-incident-{inc_id}.md"
        assert path.value == str(expected) and app.focused is path
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        assert expected.read_text(encoding="utf-8").strip()
        assert any(str(expected) in m for m in notes(app))

    run(make_app(db_path=db), steps)


EXPORTS = [
    ("{tmp}/out", "{tmp}/out/tracelens-incident-{id}.md", None),  # a folder: the name shown
    ("{tmp}/out/mine.md", "{tmp}/out/mine.md", None),
    ("mine.md", "{cwd}/mine.md", None),  # relative to the folder shown
    ("{tmp}/no/such/dir/t.md", None, "no such folder"),
]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """One run exports the first incident to each path of EXPORTS in turn (the dialog opened
    anew each time, closed with escape where it stayed open); for each: the incident's id, the
    messages that export added, and whether the dialog stayed open. The paths differ, so no
    export finds the file of another."""
    base = tmp_path_factory.mktemp("exports")
    db = make_store(base / "incidents.db")
    (base / "out").mkdir()
    (base / "cwd").mkdir()
    results: dict = {}

    async def steps(pilot, app):
        await pilot.press("enter")
        await pilot.pause()
        for given, _written, _error in EXPORTS:
            before = list(app._notifications)  # (a message may expire meanwhile)
            await pilot.press("t")
            await pilot.pause()
            assert isinstance(app.screen, ExportScreen), given
            app.screen.query_one("#path", Input).value = given.format(tmp=base)
            await pilot.press("enter")
            await pilot.pause()
            results[given] = {
                "id": app.screen.view.incident.id,
                "notes": [n.message for n in app._notifications if n not in before],
                "still_open": isinstance(app.screen, ExportScreen),
            }
            if results[given]["still_open"]:
                await pilot.press("escape")
                await pilot.pause()
            assert isinstance(app.screen, DiagnosisScreen), given

    with own_dirs(base), pytest.MonkeyPatch.context() as mp:
        mp.chdir(base / "cwd")
        run(make_app(db_path=db), steps)
    return base, results


@pytest.mark.parametrize("given, written, error", EXPORTS)
def test_export_to_a_folder_a_file_or_nowhere(exports, given, written, error):
    base, results = exports
    result = results[given]
    if error:
        assert result["still_open"] and any(error in m for m in result["notes"])
        assert not list(base.rglob("t.md"))
    else:
        target = base.resolve() / written.format(tmp="", cwd="cwd", id=result["id"]).lstrip("/")
        assert target.is_file() and not result["still_open"]
        assert any(f"written to {target}" in m for m in result["notes"])


def test_export_asks_before_replacing_a_file(db, tmp_path):
    target = tmp_path / "ticket.md"
    target.write_text("keep me", encoding="utf-8")

    async def steps(pilot, app):
        await pilot.press("enter", "t")
        await pilot.pause()
        app.screen.query_one("#path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert target.read_text(encoding="utf-8") == "keep me"
        assert any("exists" in m for m in notes(app))
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
        assert target.read_text(encoding="utf-8") != "keep me"

    run(make_app(db_path=db), steps)


# the theme --------------------------------------------------------------------------------------


def test_the_theme_is_remembered_across_runs(tmp_path):
    seen: dict = {}

    async def first(pilot, app):
        seen["before"] = app.theme
        await pilot.press("ctrl+t")
        await pilot.pause()
        seen["chosen"] = app.theme

    async def second(pilot, app):
        seen["after"] = app.theme

    run(make_app(db_path=tmp_path / "none.db"), first)
    path = default_settings_path()
    assert path == tmp_path / "config" / "tracelens" / "tui.json"  # under XDG_CONFIG_HOME
    assert json.loads(path.read_text()) == {"theme": seen["chosen"]}
    run(make_app(db_path=tmp_path / "none.db"), second)
    assert seen["chosen"] != seen["before"] and seen["after"] == seen["chosen"]


@pytest.mark.parametrize(
    "content, warned",
    [
        ("{not json", True),
        (b"\xff\xfe\x00", True),
        ("[1, 2]", True),
        ('{"theme": 42}', False),  # a value of the wrong type: dropped
        ('{"theme": "no-such-theme"}', False),  # a theme since removed: the default
    ],
)
def test_a_broken_settings_file_is_ignored(tmp_path, content, warned):
    path = default_settings_path()
    path.parent.mkdir(parents=True)
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)

    async def steps(pilot, app):
        assert isinstance(app.screen, IncidentsScreen)
        assert app.theme == "textual-dark"
        assert any(str(path) in m for m in notes(app)) == warned

    run(make_app(db_path=tmp_path / "none.db"), steps)


# the incident's header --------------------------------------------------------------------------


def test_the_attached_ticket_is_shown_in_the_header(db):
    async def steps(pilot, app):
        await pilot.press("enter")
        await pilot.pause()
        header = app.screen.query_one("#summary", Static)
        assert "ticket" not in str(header.render()).split("\n")[0]
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"OPS-42", "enter")
        await pilot.pause()
        assert "ticket OPS-42" in str(header.render()).split("\n")[0]
        await pilot.press("escape", "enter")  # opened again: read back from the store
        await pilot.pause()
        first = str(app.screen.query_one("#summary", Static).render()).split("\n")[0]
        assert first.startswith("Incident #") and "ticket OPS-42" in first

    run(make_app(db_path=db), steps)


@pytest.mark.parametrize(
    "keys, table_id",
    [([], "#incidents"), (["r", "enter"], "#rules")],
    ids=["incident list", "rules browser"],
)
def test_a_resize_keeps_the_highlighted_row_and_follows_a_new_width(db, keys, table_id):
    """A taller terminal changes no column: the list is not filled again, so the highlighted
    row stays where it was; a wider one changes the columns, and the rows are cut anew."""
    seen: dict = {}

    async def steps(pilot, app):
        await pilot.press(*keys, "down", "down")
        await pilot.pause()
        table = app.screen.query_one(table_id, DataTable)
        rows, widths = table.row_count, [c.width for c in table.columns.values()]
        assert app.focused is table and table.cursor_row == 2
        await pilot.resize_terminal(80, 30)
        await pilot.pause()
        seen["taller"] = (
            table.cursor_row,
            table.row_count,
            [c.width for c in table.columns.values()],
        )
        await pilot.resize_terminal(200, 30)
        await pilot.pause()
        seen["wider"] = (table.row_count, [c.width for c in table.columns.values()])
        seen["before"] = (rows, widths)

    run(make_app(db_path=db), steps, size=(80, 24))
    rows, widths = seen["before"]
    assert seen["taller"] == (2, rows, widths)
    assert seen["wider"][0] == rows and seen["wider"][1] != widths
