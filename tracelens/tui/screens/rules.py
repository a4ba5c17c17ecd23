"""The rules browser: search rules, read one, open its examples."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tracelens.tui.app import TracelensApp

from rapidfuzz import fuzz, process
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static


class RulesScreen(Screen):
    @property
    def tl(self) -> TracelensApp:
        """The app, with its own attributes known to type checkers."""
        return cast("TracelensApp", self.app)

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("o", "open_example", "Open example (next)"),
        Binding("slash", "focus_search", "Search"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="search rules: id, title, category", id="search")
        with Horizontal():
            yield DataTable(id="rules", cursor_type="row")
            with VerticalScroll(id="rule-pane"):
                yield Static(id="rule")
        yield Footer()

    def on_mount(self) -> None:
        self.example_index: dict[int, int] = {}
        self.rules = sorted(self.tl.rules.rules, key=lambda lr: lr.id)
        self.haystack = [f"{lr.rule.id} {lr.rule.title} {lr.rule.category}" for lr in self.rules]
        table = self.query_one(DataTable)
        table.add_columns("rule", "category")
        self.fill("")
        table.focus()

    def fill(self, query: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        idx: range | list[int] = range(len(self.rules))
        if query:
            hits = process.extract(
                query, self.haystack, scorer=fuzz.WRatio, score_cutoff=55, limit=None
            )
            idx = [k for _t, _s, k in sorted(hits, key=lambda h: -h[1])]
        for k in idx:
            r = self.rules[k].rule
            table.add_row(Text(r.id), Text(r.category), key=str(k))
        if table.row_count:
            self.show(int(str(table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value)))
        else:
            self.query_one("#rule", Static).update(Text("no rule matches"))

    def show(self, k: int) -> None:
        from tracelens.render.rules import render_rule

        self.current = k
        self.query_one("#rule", Static).update(Text(render_rule(self.rules[k])))

    def on_input_changed(self, event: Input.Changed) -> None:
        self.fill(event.value.strip())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.show(int(str(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.show(int(str(event.row_key.value)))

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_open_example(self) -> None:
        """Open the rule's next example log (each press moves to the next one)."""
        k = getattr(self, "current", 0)
        lr = self.rules[k]
        if not lr.examples:
            self.notify("this rule has no example log", severity="warning")
            return
        seen = self.example_index.get(k, -1) + 1
        self.example_index[k] = seen % len(lr.examples)
        path = lr.examples[self.example_index[k]]
        self.notify(f"example {self.example_index[k] + 1} of {len(lr.examples)}: {path.name}")
        self.tl.open_report(self.tl.diagnose_bytes(path.read_bytes(), str(path)))

    def action_back(self) -> None:
        self.app.pop_screen()
