"""The rules browser: search rules, read one, open its examples."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from tracelens.tui.app import TracelensApp

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from tracelens.tui.filtering import WordIndex
from tracelens.tui.footer import KeyFooter
from tracelens.tui.layout import CATEGORY_CUT, PADDING, SCROLLBAR, fit, rule_columns

LIST_SHARE = 0.5
"""The share of the screen's width the rule list takes (the rule pane takes the rest)."""
LIST_MIN, LIST_MAX = 34, 92
"""The list's width bounds; past ``LIST_MAX`` only as far as the longest rule id and a
category cut to ``CATEGORY_CUT`` need, while that fits in its share of the screen."""


class RulesScreen(Screen):
    """The search box has the keys on arrival (the screen says "type to search"); Up/Down
    there move the list, Enter goes to the list, where ``o`` opens the rule's examples."""

    @property
    def tl(self) -> TracelensApp:
        """The app, with its own attributes known to type checkers."""
        return cast("TracelensApp", self.app)

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="back to the incident list"),
        Binding(
            "o", "open_example", "Open example", tooltip="diagnose the rule's next example log"
        ),
        Binding("slash", "focus_search", "Search", tooltip="back to the search box"),
        Binding("down", "move(1)", "Next rule", show=False, tooltip="(in the search box)"),
        Binding("up", "move(-1)", "Previous rule", show=False, tooltip="(in the search box)"),
        Binding("pagedown", "scroll_rule(1)", "Scroll the rule", show=False),
        Binding("pageup", "scroll_rule(-1)", "Scroll the rule back", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(
            placeholder="type to search: words of the id, title or category (↓ or enter: the list)",
            id="search",
        )
        with Horizontal():
            yield DataTable(id="rules", cursor_type="row")
            with VerticalScroll(id="rule-pane"):
                yield Static(id="rule")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.example_index: dict[int, int] = {}
        self.widths: dict[str, int] = {}
        self.current = 0
        self.rules = sorted(self.tl.rules.rules, key=lambda lr: lr.id)
        self.index = WordIndex(
            [f"{lr.rule.id} {lr.rule.title} {lr.rule.category}" for lr in self.rules]
        )
        self.fill("")
        self.query_one("#search", Input).focus()

    def _set_columns(self) -> bool:
        """The list's columns for the screen's width; whether they changed."""
        longest = max((len(lr.rule.id) for lr in self.rules), default=10)
        most = max(LIST_MAX, longest + CATEGORY_CUT + PADDING * 2 + SCROLLBAR)
        width = min(max(int(self.size.width * LIST_SHARE), LIST_MIN), most)
        widths = rule_columns(
            width, longest, max((len(lr.rule.category) for lr in self.rules), default=10)
        )
        if widths == self.widths:
            return False
        table = self.query_one(DataTable)
        used = [w for w in widths.values() if w]
        table.styles.width = min(width, sum(used) + PADDING * len(used) + SCROLLBAR)
        table.clear(columns=True)
        table.add_column("rule", key="rule", width=widths["rule"])
        if widths["category"]:
            table.add_column("category", key="category", width=widths["category"])
        self.widths = widths
        return True

    def on_resize(self) -> None:
        if self._set_columns():  # else the rules listed are cut to the widths they have
            self.fill(self.query_one("#search", Input).value)

    def fill(self, query: str) -> None:
        self._set_columns()
        table = self.query_one(DataTable)
        table.clear()
        w = self.widths
        hits = self.index.search(query)
        typed = query.strip().lower()
        if typed:  # rules whose id holds the query as typed come first (then in id order)
            hits.sort(key=lambda k: typed not in self.rules[k].id.lower())
        for k in hits:
            r = self.rules[k].rule
            cells = [Text(fit(r.id, w["rule"]))]
            if w["category"]:
                cells.append(Text(fit(r.category, w["category"]), style="dim"))
            table.add_row(*cells, key=str(k))
        if table.row_count:
            self.show(int(str(table.coordinate_to_cell_key(Coordinate(0, 0)).row_key.value)))
        else:
            self.query_one("#rule", Static).update(Text("no rule matches every word"))

    def show(self, k: int) -> None:
        from tracelens.render.rules import render_rule

        self.current = k
        self.query_one("#rule", Static).update(Text(render_rule(self.rules[k])))

    def on_input_changed(self, event: Input.Changed) -> None:
        self.fill(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self.show(int(str(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.show(int(str(event.row_key.value)))
        self.query_one("#rule-pane").focus()

    def action_move(self, step: int) -> None:
        """Up/Down in the search box move the list's highlight; Down from the box's end."""
        table = self.query_one(DataTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.cursor_row + step, table.row_count - 1)))

    def action_scroll_rule(self, step: int) -> None:
        pane = self.query_one("#rule-pane", VerticalScroll)
        (pane.scroll_page_down if step > 0 else pane.scroll_page_up)()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` only where it moves to the search box (in the box it is typed, and the footer
        does not offer it)."""
        return not (action == "focus_search" and isinstance(self.focused, Input))

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_open_example(self) -> None:
        """Open the rule's next example log (each press moves to the next one)."""
        k = self.current
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
