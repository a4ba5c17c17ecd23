"""The TUI's Similar tab for a stored incident: the store is asked for the incidents like it
(never itself), with what fixed them. A longer TUI walk over a store of many logs: ``--full``."""

from __future__ import annotations

import asyncio

import pytest
from similar_pairs import NVLS, nvls_store
from textual.widgets import DataTable, TabbedContent
from tui_fixtures import own_config  # noqa: F401 (autouse)

from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import Store
from tracelens.tui import make_app
from tracelens.tui.screens.diagnosis import DiagnosisScreen

pytestmark = pytest.mark.slow


def test_similar_tab_of_a_stored_incident_lists_its_resolved_twin(tmp_path):
    db = tmp_path / "incidents.db"
    twin = nvls_store(db)
    store = Store(db)
    rec = save(
        store, diagnose(NVLS.read_bytes()), Redactor(), NVLS.name, seen_at="2099-01-01T00:00:00"
    )  # the most recent: the first row of the list
    assert rec is not None
    store.close()

    async def go():
        async with make_app(db_path=db).run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            screen = pilot.app.screen
            assert isinstance(screen, DiagnosisScreen)
            assert screen.view.incident and screen.view.incident.id == rec.incident_id
            await pilot.press("5")
            await pilot.pause()
            assert screen.query_one(TabbedContent).active == "similar"
            table = screen.query_one("#similartable", DataTable)
            rows = [table.get_row_at(k) for k in range(table.row_count)]
            keys = [table.coordinate_to_cell_key((k, 0)).row_key.value for k in range(len(rows))]
            assert keys[0] == str(twin) and str(rec.incident_id) not in keys
            assert str(rows[0][-1]) == "NCCL_NVLS_ENABLE=0"  # the "fixed by" column
            table.focus()
            await pilot.press("enter")  # opens the twin
            await pilot.pause()
            assert pilot.app.screen.view.incident.id == twin

    asyncio.run(go())
