"""The incident list: a table with a word filter box, sorting, status and category filters."""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tracelens.incidents.records import IncidentRow
    from tracelens.tui.app import TracelensApp

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Select, Static

from tracelens.read.logread import clean
from tracelens.tui.filtering import WordIndex
from tracelens.tui.footer import KeyFooter
from tracelens.tui.layout import fit, incident_columns

SHOWN = 200
"""Rows drawn at once (a screen shows a few dozen); the filter and sorting reach the rest."""
PAGE = 20_000
"""Rows read at a time when the filter or a sort needs every incident."""
COLUMNS = (
    ("last_seen", "Last seen"),
    ("count", "Seen"),
    ("status", "Status"),
    ("category", "Category"),
    ("title", "Title"),
)
"""The table's columns (sort keys) and their headers; widths follow the terminal."""
STATUS_MARK = {"resolved": "✓", "ignored": "–", "open": ""}
"""The status column of a narrow terminal: one character."""
INDEX_IN_BACKGROUND = 5_000
"""From this many incidents on, the filter's word index is built in a background thread (about
3 s of CPU for 100,000 incidents, benchmarks/README.md); the list says "indexing…" meanwhile."""


class IncidentsScreen(Screen):
    @property
    def tl(self) -> TracelensApp:
        """The app, with its own attributes known to type checkers."""
        return cast("TracelensApp", self.app)

    """Past incidents, most recent first."""

    AUTO_FOCUS = "#incidents"
    """The list has the keys on arrival. Textual's default focuses the first focusable widget,
    the filter box, and the footer was composed for its keys (none) before on_mount moved the
    focus to the list."""

    BINDINGS = [
        Binding("enter", "open", "Open", show=False, tooltip="open the highlighted incident"),
        Binding(
            "slash",
            "focus_filter",
            "Filter",
            tooltip="filter: every word must match the title, category, rule or message",
        ),
        Binding("s", "sort", "Sort", tooltip="sort by the next column (or click a header)"),
        Binding("f", "cycle_status", "Status", tooltip="show open, resolved, ignored or all"),
        Binding("n", "new_log", "New log", tooltip="diagnose a log (a path or pasted text)"),
        Binding("r", "rules", "Rules", tooltip="the rules browser"),
        Binding("g", "reload", "Reload", show=False, tooltip="read the store again"),
        Binding("down", "focus_list", "List", show=False, tooltip="from the filter: the list"),
        Binding(
            "escape",
            "clear_filter",
            "Clear",
            show=False,
            tooltip="clear the filter and go back to the list",
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[IncidentRow] = []
        self._index: WordIndex | None = None
        self._indexing = False
        self.shown: list[int] = []
        self.total = 0
        """Incident ids in table order."""
        self.sort_key = "last_seen"
        self.sort_reverse = True
        self.status: str | None = None
        self.category: str | None = None
        self.complete = True
        """Every incident is in ``rows`` (else the first page: filters ask the store)."""
        self.matched = 0
        """How many incidents the filters let through."""
        self._page: tuple[tuple, list[IncidentRow], int] | None = None
        self._generation = 0
        self._loading = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Input(placeholder="/ filter: titles, rules, messages", id="filter")
            yield Select(
                [(s, s) for s in ("open", "resolved", "ignored")], prompt="status", id="status"
            )
            yield Select([], prompt="category", id="category")
        yield DataTable(id="incidents", cursor_type="row", zebra_stripes=True)
        yield Static(id="count")
        yield KeyFooter()

    def on_mount(self) -> None:
        # the incidents are read when the screen is shown (on_screen_resume), the first time too
        self.widths: dict[str, int] = {}
        self.query_one(DataTable).focus()

    def _set_columns(self) -> bool:
        """Columns as wide as the terminal allows: the title takes what the others leave.
        Whether they changed (the table is then empty)."""
        category = max((len(r.category or "") for r in self.rows), default=8)
        widths = incident_columns(self.size.width, category)
        if widths == self.widths:
            return False
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for key, label in COLUMNS:
            table.add_column(label if widths[key] > 1 else "✓", key=key, width=widths[key])
        self.widths = widths
        return True

    def on_resize(self) -> None:
        if self._set_columns():  # else the rows on show are still the rows to show
            self.refresh_table()

    # data ---------------------------------------------------------------------------------------

    def load(self) -> None:
        """Show the most recent incidents at once: one page read in index order, the counts and
        the category list from the store's counts table, so the first screen reads no table
        whole at any size. Status and category filters ask the store for their first page;
        every row is read (in pages, in a background thread) only once the word filter or a
        sort on another column needs them."""
        self.rows, self._index, self._page = [], None, None
        self.complete, self._loading, self.total = True, False, 0
        self._generation += 1
        if not (self.tl.db_path and self.tl.db_path.exists()):
            self.refresh_table()
            return
        store = self.tl.store(create=False)
        if store is None:
            return
        self.rows = store.listing(limit=SHOWN)
        self.total = store.count()
        cats = store.categories()
        store.close()
        self.complete = len(self.rows) >= self.total
        self.query_one("#category", Select).set_options([(c, c) for c in cats])
        self.refresh_table()

    def _load_all(self) -> None:
        """Start reading every incident in the background (once)."""
        if not (self.complete or self._loading):
            self._loading = True
            generation = self._generation
            self.run_worker(
                lambda: self._read_all(generation), thread=True, exclusive=True, group="load"
            )

    def _read_all(self, generation: int) -> None:
        from tracelens.incidents.store import Store

        store = Store(self.tl.db_path, create=False)
        rows: list[IncidentRow] = []
        try:
            while page := store.listing(
                PAGE, before=(rows[-1].last_seen, rows[-1].id) if rows else None
            ):
                rows += page
        finally:
            store.close()
        self.app.call_from_thread(self._loaded, rows, generation)

    def _loaded(self, rows: list[IncidentRow], generation: int) -> None:
        if generation == self._generation:  # else a reload started since
            self.rows, self._index, self.complete, self._loading = rows, None, True, False
            self.refresh_table()

    def _first_page(self) -> list[IncidentRow]:
        """The status and category filters' first page and count, from the store's indexes."""
        key = (self.status, self.category)
        if not any(key):
            self.matched = self.total
            return self.rows
        if self._page is None or self._page[0] != key:
            store = self.tl.store(create=False)
            if store is None:
                return []
            rows = store.listing(SHOWN, status=self.status, category=self.category)
            self._page = (key, rows, store.count(status=self.status, category=self.category))
            store.close()
        self.matched = self._page[2]
        return self._page[1]

    def _search_texts(self) -> dict[int, str]:
        """The stored text the filter searches besides the listed columns (the message, the
        resolution note and the signature, as the CLI's ``--search``), by incident id; none
        where the store cannot be read (the listed columns are still searched)."""
        import sqlite3

        from tracelens.incidents.store import Store, StoreError

        try:
            store = Store(self.tl.db_path, create=False)
        except StoreError:
            return {}
        try:
            return {
                row[0]: " ".join(x or "" for x in row[1:])
                for row in store.db.execute(
                    "SELECT id, message, resolution_note, signature FROM incidents"
                )
            }
        except sqlite3.Error:
            return {}
        finally:
            store.close()

    def _build_index(self, rows: list[IncidentRow]) -> WordIndex:
        more = self._search_texts() if rows and self.tl.db_path else {}
        return WordIndex(
            [f"{r.title} {r.category} {r.rule_id or ''} {more.get(r.id, '')}" for r in rows]
        )

    def word_index(self) -> WordIndex | None:
        """The words of each row, built on the first keystroke (in a background thread for a
        large store: ``None`` until it is ready)."""
        if self._index is None:
            if len(self.rows) < INDEX_IN_BACKGROUND:
                self._index = self._build_index(self.rows)
            elif not self._indexing:
                self._indexing = True
                rows, generation = self.rows, self._generation
                self.run_worker(
                    lambda: self._index_in_thread(rows, generation), thread=True, group="index"
                )
        return self._index

    def _index_in_thread(self, rows: list[IncidentRow], generation: int) -> None:
        index = self._build_index(rows)
        self.app.call_from_thread(self._indexed, index, rows, generation)

    def _indexed(self, index: WordIndex, rows: list[IncidentRow], generation: int) -> None:
        self._indexing = False
        if generation == self._generation and rows is self.rows:  # else: read again since
            self._index = index
        self.refresh_table()

    def visible_rows(self) -> list[IncidentRow]:
        query = self.query_one("#filter", Input).value.strip()
        if not self.complete:
            if not query and (self.sort_key, self.sort_reverse) == ("last_seen", True):
                return self._first_page()
            self._load_all()
            self.matched = 0
            return []  # until every row is read
        idx: range | list[int] = range(len(self.rows))
        if query:
            index = self.word_index()
            if index is None:
                self.matched = 0
                return []  # until the index is built
            idx = index.search(query)
        rows = [self.rows[k] for k in idx]
        if self.status:
            rows = [r for r in rows if r.status == self.status]
        if self.category:
            rows = [r for r in rows if r.category == self.category]
        if (self.sort_key, self.sort_reverse) != ("last_seen", True):  # else: already in order
            column = attrgetter(self.sort_key)
            rows.sort(
                key=lambda r: (column(r) is None, column(r)),
                reverse=self.sort_reverse,
            )
        self.matched = len(rows)
        return rows

    def refresh_table(self) -> None:
        self._set_columns()
        table = self.query_one(DataTable)
        table.clear()
        rows = self.visible_rows()
        self.shown = [r.id for r in rows[:SHOWN]]
        w = self.widths
        table.add_rows(
            (
                Text((r.last_seen or "")[5:16].replace("T", " ")),
                Text(str(r.count), justify="right"),
                Text(
                    fit(r.status, w["status"]) if w["status"] > 1 else STATUS_MARK[r.status],
                    style="green" if r.status == "resolved" else "",
                ),
                Text(fit(r.category or "", w["category"])),
                Text(fit(clean(r.title or ""), w["title"])),
            )
            for r in rows[:SHOWN]
        )
        more = f" (first {SHOWN} shown)" if self.matched > SHOWN else ""
        loading = " · loading…" if self._loading else " · indexing…" if self._indexing else ""
        empty = "  no incidents yet: press n to diagnose a log" if not self.rows else ""
        self.query_one("#count", Static).update(
            Text(
                f"{self.matched} of {max(self.total, len(self.rows))} incidents · sorted by {self.sort_key}{more}{loading}{empty}"
            )
        )

    # events and actions ---------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.refresh_table()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if event.select.id == "status":
            self.status = value
        elif event.select.id == "category":
            self.category = value
        self.refresh_table()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        self.sort_reverse = (
            not self.sort_reverse if key == self.sort_key else key in ("last_seen", "count")
        )
        self.sort_key = key
        self.refresh_table()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.tl.open_incident(self.shown[event.cursor_row])

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            self.tl.open_incident(self.shown[table.cursor_row])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` only where it moves to the filter (in the box it is typed)."""
        return not (action == "focus_filter" and isinstance(self.focused, Input))

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_focus_list(self) -> None:
        self.query_one(DataTable).focus()

    def action_clear_filter(self) -> None:
        self.query_one("#filter", Input).value = ""
        self.query_one(DataTable).focus()

    def action_sort(self) -> None:
        keys = [k for k, _ in COLUMNS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_reverse = self.sort_key in ("last_seen", "count")
        self.refresh_table()

    def action_cycle_status(self) -> None:
        order = [None, "open", "resolved", "ignored"]
        self.status = order[(order.index(self.status) + 1) % len(order)]
        self.query_one("#status", Select).value = self.status if self.status else Select.NULL

    def action_new_log(self) -> None:
        from tracelens.tui.screens.dialogs import NewLogScreen

        self.app.push_screen(NewLogScreen())

    def action_rules(self) -> None:
        from tracelens.tui.screens.rules import RulesScreen

        self.app.push_screen(RulesScreen())

    def action_reload(self) -> None:
        self.load()

    def on_screen_resume(self) -> None:
        self.load()
