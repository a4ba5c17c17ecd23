"""The TUI: Pilot tests for every workflow and binding (the app is built by make_app from a
temporary store and corpus logs)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Select, TabbedContent
from tui_fixtures import (  # noqa: F401 (autouse)
    LOGS,
    SEED,
    make_store,
    own_config,
    own_dirs,
    run,
    seed_report,
)

from tracelens.engine import diagnose
from tracelens.incidents.store import Store
from tracelens.tui import make_app
from tracelens.tui.screens.diagnosis import DiagnosisScreen
from tracelens.tui.screens.dialogs import (
    AttachScreen,
    ExportScreen,
    HelpScreen,
    NewLogScreen,
    ResolveScreen,
)
from tracelens.tui.screens.incidents import IncidentsScreen
from tracelens.tui.screens.logview import LogReader
from tracelens.tui.screens.rules import RulesScreen

# Pilot walks: the full suite runs them (tests/tiers.py); the snapshots stay in the quick one
pytestmark = pytest.mark.slow


@pytest.fixture()
def db(tmp_path):
    return make_store(tmp_path / "incidents.db")


def table_rows(app) -> int:
    return app.screen.query_one("#incidents", DataTable).row_count


def test_opens_on_the_incident_list(db):
    async def steps(pilot, app):
        assert isinstance(app.screen, IncidentsScreen)
        assert table_rows(app) == len(LOGS)

    run(make_app(db_path=db), steps)


def test_fuzzy_filter_as_you_type_and_clear(db):
    async def steps(pilot, app):
        await pilot.press("slash")
        await pilot.press(*"memory")
        await pilot.pause()
        titles = [
            str(app.screen.query_one("#incidents", DataTable).get_row_at(k)[4])
            for k in range(table_rows(app))
        ]
        assert 0 < len(titles) < len(LOGS)
        assert any("memory" in t.lower() for t in titles)
        await pilot.press("escape")
        await pilot.pause()
        assert table_rows(app) == len(LOGS)

    run(make_app(db_path=db), steps)


def test_sort_and_status_and_category_filters(db):
    async def steps(pilot, app):
        screen = app.screen
        await pilot.press("s")
        assert screen.sort_key == "count"
        await pilot.press("s", "s")
        assert screen.sort_key == "category"
        cats = [
            str(screen.query_one("#incidents", DataTable).get_row_at(k)[3])
            for k in range(table_rows(app))
        ]
        assert cats == sorted(cats)
        await pilot.press("f")
        await pilot.pause()
        assert screen.status == "open" and table_rows(app) == len(LOGS)
        await pilot.press("f")
        await pilot.pause()
        assert screen.status == "resolved" and table_rows(app) == 0
        await pilot.press("f", "f")
        await pilot.pause()
        screen.query_one("#category", Select).value = "gpu-oom"
        await pilot.pause()
        assert table_rows(app) == 1

    run(make_app(db_path=db), steps)


def test_open_incident_resolve_attach_and_back(db):
    async def steps(pilot, app):
        table = app.screen.query_one("#incidents", DataTable)
        seed_row = next(k for k in range(table.row_count) if "MLA" in str(table.get_row_at(k)[4]))
        table.move_cursor(row=seed_row)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiagnosisScreen) and screen.view.incident is not None
        inc_id = screen.view.incident.id
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ResolveScreen)
        app.screen.query_one("#remedy", Select).value = app.screen.remedies[1]
        app.screen.query_one("#note", Input).focus()
        await pilot.press(*"removed the KV-cache keys", "enter")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AttachScreen)
        await pilot.press(*"OPS-42", "enter")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, IncidentsScreen)
        inc = Store(db).incident(inc_id)
        assert inc.status == "resolved" and inc.remedy_worked.startswith(
            "Remove kv_cache_quant_algo"
        )
        assert inc.resolution_note == "removed the KV-cache keys"
        assert [t.ref for t in inc.tickets] == ["OPS-42"]

    run(make_app(db_path=db), steps)


def test_diagnosis_tabs_copy_and_evidence_jumps(tmp_path):
    async def steps(pilot, app):
        screen = app.screen
        assert isinstance(screen, DiagnosisScreen)
        tabs = screen.query_one(TabbedContent)
        for key, tab in zip("23451", ("log", "traceback", "facts", "similar", "diagnosis")):
            await pilot.press(key)
            assert tabs.active == tab
        await pilot.press("c")  # the first remedy is highlighted on arrival
        assert app.clipboard.startswith("pip install -U 'vllm>=0.18.0'")
        await pilot.press("e")
        await pilot.pause()
        assert tabs.active == "log"
        log = screen.query_one(LogReader).view
        first = log.current.number
        assert log.current.evidence
        await pilot.press("e")
        assert log.current.evidence and log.current.number != first
        await pilot.press("E")
        assert log.current.number == first

    run(make_app(db_path=tmp_path / "none.db", report=seed_report()), steps)


def test_save_new_log_then_export_ticket(tmp_path):
    out = tmp_path / "ticket.md"

    async def steps(pilot, app):
        await pilot.press("x")  # not stored yet: a warning, no dialog
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        await pilot.press("s")
        await pilot.pause()
        assert app.screen.view.incident is not None
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        path = app.screen.query_one("#path", Input)
        path.value = str(out)
        path.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert out.exists() and "Root cause" in out.read_text()
        assert app.clipboard == out.read_text()

    db = tmp_path / "new.db"
    run(make_app(db_path=db, report=seed_report()), steps)
    assert Store(db).incidents()[0].rule_id == "vllm/attention/mla-fp8-kv-unsupported"


def test_new_log_by_path_and_by_paste(tmp_path):
    async def steps(pilot, app):
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NewLogScreen)
        app.screen.query_one("#path", Input).value = str(LOGS[1])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        assert app.screen.view.diagnoses[0].category == "gpu-oom"
        await pilot.press("escape")
        await pilot.press("n")
        await pilot.pause()
        app.screen.query_one(
            "#paste"
        ).text = "RuntimeError: CUDA error: device-side assert triggered\n"
        app.screen.query_one("#go").press()
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        assert app.screen.view.diagnoses[0].rule_id == "torch/device-side-assert"

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_rules_browser_search_read_and_open_example(tmp_path):
    async def steps(pilot, app):
        await pilot.press("r")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        await pilot.press(*"mla-fp8")  # the search box has the keys
        await pilot.pause()
        table = screen.query_one(DataTable)
        first = table.coordinate_to_cell_key((0, 0)).row_key.value
        assert screen.rules[int(first)].id == "vllm/attention/mla-fp8-kv-unsupported"
        assert "What to do" in str(screen.query_one("#rule").render())
        await pilot.press("enter", "o")
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        assert app.screen.view.diagnoses[0].rule_id == "vllm/attention/mla-fp8-kv-unsupported"

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_help_and_theme(tmp_path):
    async def steps(pilot, app):
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, IncidentsScreen)
        before = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != before
        await pilot.press("ctrl+t")
        assert app.theme == before

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_log_text_is_data_not_markup(tmp_path):
    hostile = (
        "INFO 01-20 13:03:40 [x.py:1] [bold red]not bold[/bold red] [link=https://evil.example]click[/link]\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/[b]app[/b].py", line 3, in <module>\n'
        "RuntimeError: CUDA error: device-side assert triggered [blink]x[/blink] \x1b]0;pwned\x07\x1b[2J\n"
    )
    rep = diagnose(hostile.encode(), source="hostile.log")

    async def steps(pilot, app):
        await pilot.press("2")
        await pilot.pause()
        shot = app.export_screenshot()
        assert "[bold red]not bold[/bold red]" in shot.replace("&#160;", " ")
        assert "pwned" not in shot
        assert isinstance(app.screen, DiagnosisScreen)

    run(make_app(db_path=tmp_path / "none.db", report=rep), steps)


def test_quit(tmp_path):
    async def steps(pilot, app):
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running and app.return_code == 0

    run(make_app(db_path=tmp_path / "none.db"), steps)


def test_tui_reads_a_piped_log_then_takes_keys_from_the_terminal(tmp_path):
    """`kubectl logs … | tracelens tui -`: the log comes through the pipe, keys through the
    terminal (a pseudo-terminal here)."""
    import os
    import pty
    import select
    import sys
    import time

    r, w = os.pipe()
    pid, master = pty.fork()
    if pid == 0:  # the child: stdin is the pipe, the controlling terminal is the pty
        os.close(w)
        os.dup2(r, 0)
        os.environ["TRACELENS_DB"] = str(tmp_path / "none.db")
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "tracelens", "tui", "-"])
    os.close(r)
    os.write(w, SEED.read_bytes())
    os.close(w)
    seen = b""
    deadline = time.time() + 60
    while time.time() < deadline and b"MLA" not in seen:
        if select.select([master], [], [], 0.5)[0]:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    assert b"MLA" in seen, seen[-500:]
    os.write(master, b"\x1b")  # back to the incident list
    time.sleep(0.5)
    os.write(master, b"q")
    status = None
    deadline = time.time() + 30
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if select.select([master], [], [], 0.2)[0]:
            try:
                os.read(master, 65536)
            except OSError:
                pass
    else:
        os.kill(pid, 9)
    assert status is not None and os.waitstatus_to_exitcode(status) == 0


LAZY_TABS = [
    # (how the tab is chosen, the tab, what it holds)
    ("key 3", "traceback", "#tracebacks"),
    ("click", "facts", "#factstable"),
    ("e", "log", "#logview"),
    ("key 5", "similar", "#similartable"),
]
CONTENTS = [content for _how, _tab, content in LAZY_TABS]


@pytest.fixture(scope="module")
def lazy_tabs(tmp_path_factory) -> dict:
    """One run: a stored incident's diagnosis screen, then each of LAZY_TABS chosen in turn;
    which tabs' contents are in the screen at its opening and after each choice."""
    seen: dict = {}
    base = tmp_path_factory.mktemp("lazy-tabs")
    db = make_store(base / "incidents.db")

    def present(app) -> set[str]:
        return {c for c in CONTENTS if app.screen.query(c)}

    async def steps(pilot, app):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DiagnosisScreen)
        seen["opened"] = present(app)
        for how, tab, content in LAZY_TABS:
            if how == "click":
                await pilot.click(f"#--content-tab-{tab}")
            else:
                await pilot.press(how.split()[-1])
            await pilot.pause()
            widget = app.screen.query_one(content)
            seen[how] = (
                app.screen.query_one(TabbedContent).active,
                present(app),
                widget.display and widget.region.area > 0,
            )

    with own_dirs(base):
        run(make_app(db_path=db), steps)
    return seen


def test_a_diagnosis_opens_without_its_other_tabs_composed(lazy_tabs):
    assert lazy_tabs["opened"] == set()


@pytest.mark.parametrize("k, how, tab, content", [(k, *case) for k, case in enumerate(LAZY_TABS)])
def test_a_tab_is_composed_when_first_chosen_by_key_or_mouse(lazy_tabs, k, how, tab, content):
    active, present, shown = lazy_tabs[how]
    assert active == tab and shown
    assert present == set(CONTENTS[: k + 1])  # this one and the ones chosen before, no other
