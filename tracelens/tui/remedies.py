"""The remedies of a diagnosis as a list of one item per remedy (its title, steps and commands):
Up/Down choose one, ``c`` copies it, ``C`` copies them all. The list is as tall as its remedies
and scrolls with the page around it, never in a box of its own."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import ListItem, ListView, Static

from tracelens.models import Remedy


def remedy_text(k: int, remedy: Remedy) -> str:
    """A remedy as plain text: ``k. title``, its steps and its commands."""
    out = [f"{k}. {remedy.title}"]
    out += [f"   - {s}" for s in remedy.steps]
    out += [f"   $ {c}" for c in remedy.commands]
    return "\n".join(out)


def copy_text(remedy: Remedy) -> str:
    """What ``c`` copies: the remedy's commands, one a line, ready to paste in a shell; a
    remedy without commands copies its title and steps."""
    if remedy.commands:
        return "\n".join(remedy.commands)
    return "\n".join([remedy.title, *(f"- {s}" for s in remedy.steps)])


def remedy_grid(k: int, remedy: Remedy, worked: bool = False) -> Table:
    """A remedy on screen: its number and title, then its steps (-) and commands ($), each
    wrapped under its own start rather than at the left edge."""
    grid = Table.grid(padding=0, expand=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    title = Text(remedy.title + (" (already in place)" if remedy.already_applied else ""))
    title.stylize("bold green" if worked else "bold")
    if worked:
        title.append("  (worked last time)", style="green")
    grid.add_row(Text(f"{k}.".ljust(4), style="bold"), title)
    for step in remedy.steps:
        grid.add_row(Text("  - ", style="dim"), Text(step, style="dim"))
    for command in remedy.commands:
        grid.add_row(Text("  $ ", style="cyan"), Text(command, style="cyan"))
    return grid


class RemedyList(ListView):
    """One item per remedy; the highlighted one is what ``c`` copies."""

    BINDINGS = [
        Binding("down", "cursor_down", "Next remedy", show=False),
        Binding("up", "cursor_up", "Previous remedy", show=False),
    ]

    def __init__(self, remedies: list[Remedy], worked: str | None = None, **kwargs) -> None:
        self.remedies = remedies
        items = []
        for k, r in enumerate(remedies, 1):
            items.append(ListItem(Static(remedy_grid(k, r, worked == r.title))))
        super().__init__(*items, initial_index=0 if items else None, **kwargs)

    @property
    def selected(self) -> tuple[int, Remedy] | None:
        """The highlighted remedy and its number (from 1)."""
        if self.index is None or not self.remedies:
            return None
        return self.index + 1, self.remedies[self.index]

    def all_text(self) -> str:
        """Every remedy as plain text, in order (what ``C`` copies)."""
        return "\n\n".join(remedy_text(k, r) for k, r in enumerate(self.remedies, 1))

    def action_cursor_down(self) -> None:
        """The next remedy; while the highlighted one is still below the screen (the cause
        above is long), and past the last one, the page scrolls on instead."""
        if self.below_the_page() or (
            self.index is not None and self.index >= len(self.remedies) - 1
        ):
            self._page(1)
            return
        super().action_cursor_down()
        self.call_after_refresh(self._show_highlighted)

    def action_cursor_up(self) -> None:
        """The previous remedy; above the first one, the page scrolls back (to the cause)."""
        if self.index in (None, 0):
            self._page(-1)
            return
        super().action_cursor_up()
        self.call_after_refresh(self._show_highlighted)

    def below_the_page(self) -> bool:
        """Whether the highlighted remedy starts below what the page shows."""
        item, page = self.highlighted_child, self.parent
        if item is None or not isinstance(page, ScrollableContainer):
            return False
        return item.region.y >= page.region.bottom

    def _page(self, step: int) -> None:
        page = self.parent
        if isinstance(page, ScrollableContainer):
            (page.scroll_down if step > 0 else page.scroll_up)(animate=False)

    def _show_highlighted(self) -> None:
        """Scroll the page around the list (not the list: it has no scroll of its own) to
        the highlighted remedy."""
        if self.highlighted_child is not None:
            self.highlighted_child.scroll_visible(animate=False)
