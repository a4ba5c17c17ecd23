"""The log tab of the diagnosis screen: the whole log, read the way lnav and toolong read one.

Every line with its number, its process and its level; the evidence lines marked; ``/``
search with ``n``/``N`` and a match count; ``w`` wraps long lines (else they scroll
sideways, never cut); ``l`` hides lines below warning or error; ``p``/``P`` jump to the next
or previous line of another process. The lines are drawn by
:class:`~tracelens.tui.logwidget.LogView`, which renders only the rows on screen.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from tracelens.tui.loglines import FILTERS, LogLine
from tracelens.tui.logwidget import LogView

__all__ = ["LogReader", "LogView", "SearchInput"]


class SearchInput(Input):
    """The search box under the log: typing searches, enter or escape go back to the log."""

    BINDINGS = [Binding("escape", "close", "Close search")]

    def action_close(self) -> None:
        self.post_message(self.Submitted(self, self.value))


class LogReader(Vertical):
    """The log tab: the log, a search box that opens on ``/``, and a status line."""

    DEFAULT_CSS = """
    LogReader { height: 1fr; }
    LogReader > LogView { height: 1fr; }
    LogReader > #logstatus { height: 1; background: $panel; padding: 0 1; }
    LogReader > #loghint { height: 1; padding: 0 1; color: $text-muted; }
    """
    # The reader's keys are on their own hint line (below), not in the footer: with the
    # screen's incident keys the footer would not fit 80 columns
    BINDINGS = [
        Binding("slash", "search", "Search", show=False, tooltip="search the log (any case)"),
        Binding("n", "match(1)", "Next", show=False, tooltip="next match"),
        Binding("N", "match(-1)", "Prev", show=False, tooltip="previous match"),
        Binding("w", "wrap", "Wrap", show=False, tooltip="wrap long lines, or scroll them (← →)"),
        Binding(
            "l",
            "level",
            "Level",
            show=False,
            tooltip="levels: all, warning and above, error and above",
        ),
        Binding("p", "process(1)", "Process", show=False, tooltip="next line of another process"),
        Binding("P", "process(-1)", "Prev", show=False, tooltip="previous line of another process"),
    ]
    HINT = "/ search  n N match  w wrap  l level  p P process  e E evidence  ← → scroll"

    def __init__(
        self,
        lines: list[LogLine],
        start_line: int = 0,
        note: str = "",
        more: Callable[[], list[LogLine] | None] | None = None,
    ) -> None:
        super().__init__(id="logreader")
        self.more = more
        """Reads the whole log in the background, when ``lines`` are only its parsed parts."""
        self.view = LogView(lines, id="logview")
        self.start_line = start_line
        """The line the view opens at (the originating failure)."""
        self.note = note
        """Said in the status line (where the lines come from, when not the whole log)."""
        self._opened = False
        self._origin = 0
        """Where the cursor was when the search box opened: each query searches from there."""

    def compose(self) -> ComposeResult:
        yield self.view
        search = SearchInput(placeholder="search the log (enter or escape: back)", id="logsearch")
        search.display = False
        yield search
        yield Static(id="logstatus")
        yield Static(Text(self.HINT, no_wrap=True, overflow="ellipsis"), id="loghint")

    def on_mount(self) -> None:
        if self.more is not None:
            self.note = "reading the whole log…"
            self.run_worker(self._read_more, thread=True, exclusive=True, group="logreader")

    def _read_more(self) -> None:
        assert self.more is not None
        lines = self.more()
        self.app.call_from_thread(self._got_more, lines)

    def _got_more(self, lines: list[LogLine] | None) -> None:
        if lines:
            self.note = ""
            self.view.set_lines(lines)
        else:
            self.note = "a large log: the parts around its trouble"
        # one line whatever it says: no layout of the screen (on every move of the cursor)
        self.query_one("#logstatus", Static).update(self.status(), layout=False)

    def on_resize(self) -> None:
        if not self._opened and self.view.size.height:
            self._opened = True
            self.view.go_to_line(self.start_line)

    def status(self) -> Text:
        """The status line's text."""
        v = self.view
        t = Text(no_wrap=True, overflow="ellipsis")
        if v.pattern:
            found = f"{v.match_index + 1}/{len(v.matches)}" if v.matches else "no match"
            if v.matches and v.match_index < 0:
                found = f"{len(v.matches)} matches"
            t.append(f"/{v.pattern} {found}", style="bold")
            t.append(" · ")
        line = v.current
        if line is not None:
            t.append(f"line {line.number or '-'}/{v.last_number} · ")
        t.append(f"{FILTERS[self._filter][0]} · {'wrap' if v.wrap else 'no wrap'}")
        if line is not None and line.process:
            t.append(f" · {line.process}")
        if self.note:
            t.append(f" · {self.note}", style="dim")
        return t

    @property
    def _filter(self) -> int:
        return next(k for k, (_n, lv) in enumerate(FILTERS) if lv == self.view.min_level)

    def on_log_view_moved(self, event: LogView.Moved) -> None:
        self.query_one("#logstatus", Static).update(self.status(), layout=False)

    # actions --------------------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one("#logsearch", SearchInput)
        box.display = True
        box.value = self.view.pattern
        self._origin = self.view.cursor
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "logsearch":
            self.view.cursor = self._origin
            self.view.search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "logsearch":
            return
        event.stop()
        event.input.display = False
        self.view.focus()
        if event.value and not self.view.matches:
            self.notify(f"not in the log: {event.value}", severity="warning")

    def action_match(self, step: int) -> None:
        if not self.view.pattern:
            self.notify("search first (/)", severity="warning")
        elif not self.view.next_match(step):
            self.notify(f"not in the shown lines: {self.view.pattern}", severity="warning")

    def action_wrap(self) -> None:
        self.view.set_wrap(not self.view.wrap)

    def action_level(self) -> None:
        self.view.set_level(FILTERS[(self._filter + 1) % len(FILTERS)][1])

    def action_process(self, step: int) -> None:
        if not self.view.next_process(step):
            where = "below" if step > 0 else "above"
            self.notify(f"no line of another process {where}", severity="warning")
