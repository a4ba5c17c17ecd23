"""Focus and keys do what the screen and the help say: the rules browser's search box has the
keys, remedies are chosen with Up/Down and copied with c / C, the clipboard message does not
claim what it cannot know, the footer fits 80 columns, and the help lists every key."""

from __future__ import annotations

from collections import Counter

import pytest
from rich.console import Console
from textual.binding import Binding
from textual.css.stylesheet import Stylesheet
from textual.screen import Screen
from textual.widgets import DataTable, Input
from textual.widgets._footer import FooterKey
from tui_fixtures import make_store, notes, own_config, own_dirs, run, seed_report  # noqa: F401 (autouse)

from tracelens.tui import make_app
from tracelens.tui.app import TracelensApp
from tracelens.tui.keys import EXTRA
from tracelens.tui.remedies import RemedyList, copy_text, remedy_text
from tracelens.tui.screens.diagnosis import DiagnosisScreen
from tracelens.tui.screens.dialogs import HelpScreen
from tracelens.tui.screens.incidents import IncidentsScreen
from tracelens.tui.screens.rules import RulesScreen

# Pilot walks: the full suite runs them (tests/tiers.py); the snapshots stay in the quick one
pytestmark = pytest.mark.slow


def test_rules_browser_search_box_has_the_keys(tmp_path):
    async def steps(pilot, app):
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        search = screen.query_one("#search", Input)
        assert app.focused is search
        await pilot.press(*"nccl")
        await pilot.pause()
        assert search.value == "nccl"
        table = screen.query_one(DataTable)
        await pilot.press("down", "down")  # the list moves, the box keeps the keys
        assert app.focused is search and table.cursor_row == 2
        await pilot.press("up")
        assert table.cursor_row == 1
        await pilot.press("enter")  # to the list, where o opens an example
        assert app.focused is table
        await pilot.press("slash")
        assert app.focused is search

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_remedies_are_chosen_with_up_down_and_copied_with_c(tmp_path):
    async def steps(pilot, app):
        screen = app.screen
        assert isinstance(screen, DiagnosisScreen)
        remedies = screen.query_one(RemedyList)
        assert app.focused is remedies and remedies.index == 0
        assert len(remedies.remedies) >= 2
        await pilot.press("c")
        assert app.clipboard == copy_text(remedies.remedies[0])
        await pilot.press("down", "c")
        assert remedies.index == 1
        assert app.clipboard == "\n".join(remedies.remedies[1].commands)
        await pilot.press("C")
        assert app.clipboard == "\n\n".join(
            remedy_text(k, r) for k, r in enumerate(remedies.remedies, 1)
        )
        assert all(r.title in app.clipboard for r in remedies.remedies)

    # tall enough that the first remedy shows on arrival (at 80x24 Down first scrolls to it)
    run(make_app(db_path=tmp_path / "none.db", report=seed_report()), steps, size=(120, 50))


def test_the_page_scrolls_past_the_remedies_and_the_list_never_scrolls_itself(tmp_path):
    async def steps(pilot, app):
        remedies = app.screen.query_one(RemedyList)
        page = remedies.parent
        assert page.scroll_y == 0 and remedies.below_the_page()  # the cause is read first
        await pilot.press("down")  # the first remedy is below the screen: the page scrolls
        await pilot.pause()
        assert remedies.index == 0 and page.scroll_y == 1
        while remedies.below_the_page():
            await pilot.press("down")
            await pilot.pause()
        await pilot.press("down")  # on screen now: Down moves to the next remedy
        assert remedies.index == 1
        for _ in range(len(remedies.remedies) + 4):
            await pilot.press("down")
        await pilot.pause()
        assert remedies.index == len(remedies.remedies) - 1
        assert page.scroll_y > 0 and remedies.max_scroll_y == 0

    run(make_app(db_path=tmp_path / "none.db", report=seed_report()), steps)


@pytest.mark.parametrize(
    "tmux, hint",
    [(None, False), ("/tmp/tmux-0/default,1,0", True)],
)
def test_the_copy_message_does_not_claim_the_text_arrived(tmp_path, monkeypatch, tmux, hint):
    if tmux:
        monkeypatch.setenv("TMUX", tmux)
    else:
        monkeypatch.delenv("TMUX", raising=False)

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))

    async def steps(pilot, app):
        await pilot.press("c")
        await pilot.pause()
        (message,) = notes(app)
        assert "OSC 52" in message and "some terminals ignore it" in message
        assert "copied" not in message.lower()
        assert ("set-clipboard" in message) == hint
        # the text is also in a file the message names, for a terminal that dropped it
        saved = tmp_path / "data" / "tracelens" / "clipboard.txt"
        assert f"also in {saved}" in message
        assert saved.read_text().strip() and saved.read_text() in seed_remedy_text()

    run(make_app(db_path=tmp_path / "none.db", report=seed_report()), steps)


def seed_remedy_text() -> str:
    """Every remedy of the seed log's first diagnosis as ``c`` copies one (any of them)."""
    from tracelens.tui.remedies import copy_text

    return "\n".join(copy_text(r) + "\n" for r in seed_report().diagnoses[0].remedies)


def test_the_copy_message_says_when_the_file_copy_cannot_be_written(tmp_path, monkeypatch):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))

    async def steps(pilot, app):
        await pilot.press("c")
        await pilot.pause()
        (message,) = notes(app)
        assert "OSC 52" in message and "could not also write" in message

    run(make_app(db_path=tmp_path / "none.db", report=seed_report()), steps)


SCREENS = [
    ("incidents", IncidentsScreen, []),
    ("diagnosis", DiagnosisScreen, ["enter"]),
    ("rules", RulesScreen, ["r"]),
]


SIZES = [(80, 24), (200, 50)]


@pytest.fixture(scope="module")
def footers(tmp_path_factory) -> dict:
    """Per terminal size, one run visits every screen of SCREENS in turn (back from the
    diagnosis with escape); for each: the screen, the footer's keys and their right edges."""
    seen: dict = {}
    base = tmp_path_factory.mktemp("footers")
    db = make_store(base / "incidents.db")

    def steps_at(size):
        async def steps(pilot, app):
            for name, _cls, keys in SCREENS:
                await pilot.press(*keys)
                await pilot.pause()
                screen = app.screen
                if name == "rules":  # from the search box to the list, where every key works
                    await pilot.press("enter")
                    await pilot.pause()
                footer = list(app.screen.query(FooterKey))
                seen[size, name] = (
                    screen,
                    {k.key for k in footer},
                    [k.region.right for k in footer],
                )
                if name == "diagnosis":
                    await pilot.press("escape")
                    await pilot.pause()

        return steps

    with own_dirs(base):
        for size in SIZES:
            run(make_app(db_path=db), steps_at(size), size=size)
    return seen


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name, cls, keys", SCREENS)
def test_the_footer_fits_and_shows_every_key_it_should(footers, size, name, cls, keys):
    screen, shown, rights = footers[size, name]
    assert isinstance(screen, cls)
    wanted = {
        b.key for b in [*TracelensApp.BINDINGS, *cls.BINDINGS] if isinstance(b, Binding) and b.show
    }
    assert wanted <= shown
    assert rights and all(right <= size[0] for right in rights)


def help_text(app) -> str:
    console = Console(width=72, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen.table())
    return console.export_text()


@pytest.fixture(scope="module")
def help_shown(tmp_path_factory):
    """The help's lines and the app that showed them: one run serves every screen's case."""
    seen: dict = {}

    async def steps(pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        seen["lines"] = help_text(app).splitlines()

    base = tmp_path_factory.mktemp("help")
    with own_dirs(base):
        app = make_app(db_path=base / "none.db")
        run(app, steps)
    return app, seen["lines"]


@pytest.mark.parametrize("cls", [TracelensApp, IncidentsScreen, DiagnosisScreen, RulesScreen])
def test_the_help_lists_every_key_of_every_screen_on_one_line(help_shown, cls):
    app, lines = help_shown
    for b in cls.BINDINGS:
        if b.action.startswith("tab("):
            continue  # one row for the tab keys, below
        key, what = app.get_key_display(b), b.tooltip or b.description
        # the key and the start of its description on one line: the table does not wrap
        assert any(ln.strip().startswith(key + " ") and what.split()[0] in ln for ln in lines), (
            key,
            what,
        )


def test_the_help_names_the_tabs_and_the_keys_widgets_handle(tmp_path):
    async def steps(pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        text = help_text(app)
        assert "1-5" in text and "similar" in text
        for rows in EXTRA.values():
            for _key, what in rows:
                assert what.split(":")[0].split(";")[0] in " ".join(text.split())

    run(make_app(db_path=tmp_path / "none.db"), steps)


@pytest.mark.parametrize(
    "keys, box",
    [(["slash"], "#filter"), (["r"], "#search")],
)
def test_the_footer_does_not_offer_slash_inside_the_search_box(tmp_path, keys, box):
    async def steps(pilot, app):
        await pilot.press(*keys)
        await pilot.pause()
        assert app.focused is app.screen.query_one(box, Input)
        assert "slash" not in {k.key for k in app.screen.query(FooterKey)}
        await pilot.press("slash")
        assert app.screen.query_one(box, Input).value == "/"  # typed, as the footer implies

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_the_help_scrolls_with_the_keys_at_80x24(tmp_path):
    async def steps(pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        keys = app.screen.query_one("#help-keys")
        assert app.focused is keys and keys.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert keys.scroll_y > 0

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_down_or_enter_in_the_filter_goes_to_the_list(tmp_path):
    db = make_store(tmp_path / "incidents.db")

    async def steps(pilot, app):
        table = app.screen.query_one(DataTable)
        for key in ("down", "enter"):
            await pilot.press("slash", *"gpu")
            assert isinstance(app.focused, Input)
            await pilot.press(key)
            assert app.focused is table and app.screen.query_one("#filter", Input).value == "gpu"
            await pilot.press("escape")  # clears the filter
            assert app.screen.query_one("#filter", Input).value == ""

    run(make_app(db_path=db), steps)


FOOTER_STEPS = [
    # (what the step does, its keys, whether the footer's keys change)
    ("the incident list's filter box", ["slash"], True),
    ("back to the list", ["down"], True),
    ("a diagnosis", ["enter"], True),
    ("its log tab", ["2"], False),
    ("its traceback tab", ["3"], False),
    ("its facts tab", ["4"], False),
    ("its first tab again", ["1"], False),
]


def footer_wanted(screen) -> list[tuple[str, bool]]:
    """What Textual's footer shows for the screen's bindings now: each action's first shown
    binding, with whether it is enabled."""
    first: dict[str, tuple[str, bool]] = {}
    for _node, binding, enabled, _tooltip in screen.active_bindings.values():
        if binding.show:
            first.setdefault(binding.action, (binding.key, enabled))
    return list(first.values())


@pytest.fixture(scope="module")
def footer_steps(tmp_path_factory) -> list:
    """One run through FOOTER_STEPS; after each step: the footer's key widgets, the keys and
    enabled states they show, and what the screen's bindings say they should show."""
    seen: list = []
    base = tmp_path_factory.mktemp("footer-steps")
    db = make_store(base / "incidents.db")

    def record(app) -> None:
        widgets = list(app.screen.query(FooterKey))
        shown = [(k.key, not k.has_class("-disabled")) for k in widgets]
        seen.append((widgets, shown, footer_wanted(app.screen)))

    async def steps(pilot, app):
        record(app)
        for _what, keys, _changes in FOOTER_STEPS:
            await pilot.press(*keys)
            await pilot.pause()
            record(app)

    styled: list[FooterKey] = []  # kept alive, so that no two of them share an id()
    apply = Stylesheet.apply

    def counted(self, node, *args, **kwargs):
        if isinstance(node, FooterKey):
            styled.append(node)
        return apply(self, node, *args, **kwargs)

    focused: list[str | None] = []
    set_focus = Screen.set_focus

    def logged(screen, widget, *args, **kwargs):
        focused.append(widget.id if widget is not None else None)
        return set_focus(screen, widget, *args, **kwargs)

    with own_dirs(base), pytest.MonkeyPatch.context() as mp:
        mp.setattr(Stylesheet, "apply", counted)
        mp.setattr(Screen, "set_focus", logged)
        run(make_app(db_path=db), steps)
    seen.append(Counter(map(id, styled)))
    seen.append(focused)
    return seen


def test_the_incident_list_has_the_focus_from_the_start(footer_steps):
    """Not the filter box first (the first widget that takes focus), then the list: the
    footer was composed for each."""
    assert footer_steps[-1][0] == "incidents"


def test_each_footer_key_is_styled_once(footer_steps):
    """Compact before it is mounted, not made compact (and styled again) once it is."""
    styled = footer_steps[-2]
    assert styled and set(styled.values()) == {1}


@pytest.mark.parametrize(
    "k, what, changes", [(k, what, changes) for k, (what, _, changes) in enumerate(FOOTER_STEPS)]
)
def test_the_footer_is_drawn_again_only_when_its_keys_change(footer_steps, k, what, changes):
    before, after = footer_steps[k], footer_steps[k + 1]
    widgets, shown, wanted = after
    assert shown == wanted  # the keys of the screen and focus now (none in the filter box)
    assert (shown != before[1]) is changes
    # the same keys keep their widgets (nothing mounted and styled again); new keys get new ones
    assert (widgets == before[0]) is not changes
