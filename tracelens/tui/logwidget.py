"""The lines of a log on screen: a :class:`~textual.scroll_view.ScrollView` that renders only
the rows in view (Textual's Line API, as its own ``Log`` widget and toolong do), so a log of
100,000 lines opens and scrolls like a short one. A cursor line, evidence marks, search
matches, a level filter and wrapped or sideways-scrolled long lines."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tracelens.tui.loglines import LEVEL_MARK, PALETTE, LogLine, short_process, width


class LogView(ScrollView, can_focus=True):
    """The lines of a log, rendered as they scroll into view, with a cursor line."""

    COMPONENT_CLASSES = {
        "logview--gutter",
        "logview--cursor",
        "logview--evidence",
        "logview--match",
        "logview--gap",
        "logview--warning",
        "logview--error",
    }
    DEFAULT_CSS = """
    LogView { background: $surface; }
    LogView > .logview--gutter { color: $text-muted; }
    LogView > .logview--cursor { background: $boost; text-style: bold; }
    LogView > .logview--evidence { background: $warning 30%; text-style: bold; }
    LogView > .logview--match { background: $accent; color: $text; }
    LogView > .logview--gap { color: $text-muted; text-style: italic; }
    LogView > .logview--warning { color: $warning; }
    LogView > .logview--error { color: $error; text-style: bold; }
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(False)", "First line", show=False),
        Binding("end", "edge(True)", "Last line", show=False),
        Binding("left", "sideways(-1)", "Left", show=False),
        Binding("right", "sideways(1)", "Right", show=False),
    ]

    def __init__(self, lines: list[LogLine], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = lines
        self.shown: list[int] = list(range(len(lines)))
        """Indexes into :attr:`lines` of the lines the level filter lets through."""
        self.cursor = 0
        """The cursor's position in :attr:`shown`."""
        self.min_level = 0
        self.wrap = False
        self.pattern = ""
        self.matches: list[int] = []
        """Positions in :attr:`shown` of the lines that hold the query."""
        self.match_index = -1
        self._strips: dict[int, Strip] = {}
        self._lower: list[str] | None = None
        self._rows: list[int] = []
        """In wrap mode: the first row of each shown line (and the row count at the end)."""
        self._measure()

    def _measure(self) -> None:
        lines = self.lines
        processes = dict.fromkeys(ln.process for ln in lines if ln.process)
        self._colours = {p: PALETTE[k % len(PALETTE)] for k, p in enumerate(processes)}
        self._labels = {p: short_process(p) for p in processes}
        self._process_width = max((len(s) for s in self._labels.values()), default=0)
        self.last_number = max((ln.number for ln in lines), default=0)
        """The highest line number (how long the log is)."""
        self._number_width = len(str(self.last_number))
        self._text_width = max((width(ln.text) for ln in lines), default=0)

    def set_lines(self, lines: list[LogLine]) -> None:
        """Show other lines (the whole log, read after the first view); the cursor stays on
        the line number it was on."""
        here = self.current.number if self.current else 0
        self.lines = lines
        self._lower = None
        self._measure()
        self.set_level(self.min_level)
        self.go_to_line(here)

    # layout -------------------------------------------------------------------------------

    @property
    def gutter_width(self) -> int:
        """Cells before the text: number, level mark, evidence mark, process."""
        width = self._number_width + 4  # the number, a space, the level and evidence marks, a space
        return width + self._process_width + 1 if self._process_width else width

    @property
    def current(self) -> LogLine | None:
        return self.lines[self.shown[self.cursor]] if self.shown else None

    def _layout(self) -> None:
        """The virtual size (and the wrapped rows) after a change of lines, width or mode."""
        self._strips.clear()
        if not self.wrap:
            self._rows = []
            self.virtual_size = Size(self.gutter_width + self._text_width, len(self.shown))
        else:
            body = max(1, self.scrollable_content_region.width - self.gutter_width)
            heights = (max(1, -(-width(self.lines[i].text) // body)) for i in self.shown)
            self._rows = [0, *accumulate(heights)]
            self.virtual_size = Size(self.scrollable_content_region.width, self._rows[-1])
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # drawn in the old theme's colours

    def on_resize(self, event: Resize) -> None:
        if self.wrap:
            self._layout()

    def _row_of(self, pos: int) -> int:
        return self._rows[pos] if self.wrap else pos

    def _line_at(self, row: int) -> tuple[int, int]:
        """(position in :attr:`shown`, wrapped part) of a virtual row."""
        if not self.wrap:
            return row, 0
        pos = bisect_right(self._rows, row) - 1
        return pos, row - self._rows[pos]

    def on_mount(self) -> None:
        self._layout()

    # rendering ------------------------------------------------------------------------------

    def _text_strip(self, index: int) -> Strip:
        strip = self._strips.get(index)
        if strip is not None:
            return strip
        line = self.lines[index]
        text = Text(line.text, no_wrap=True, end="")
        if not line.number:
            text.stylize(self.get_component_rich_style("logview--gap"))
        if line.evidence:
            text.stylize(self.get_component_rich_style("logview--evidence"))
        if self.pattern:
            hay, size = line.text.lower(), len(self.pattern)
            match = self.get_component_rich_style("logview--match")
            at = hay.find(self.pattern)
            while at >= 0:
                text.stylize(match, at, at + size)
                at = hay.find(self.pattern, at + size)
        strip = Strip(list(text.render(self.app.console)), width(line.text))
        if len(self._strips) > 4000:
            self._strips.clear()
        self._strips[index] = strip
        return strip

    def _gutter(self, line: LogLine, first: bool) -> list[Segment]:
        gutter = self.get_component_rich_style("logview--gutter")
        if not first or not line.number:
            return [Segment(" " * self.gutter_width, gutter)]
        level = min(line.level, 4)
        level_style = (
            self.get_component_rich_style("logview--error")
            if level >= 3
            else self.get_component_rich_style("logview--warning")
            if level == 2
            else gutter
        )
        out = [
            Segment(f"{line.number:>{self._number_width}} ", gutter),
            Segment(LEVEL_MARK[level], level_style),
            Segment(
                "▶" if line.evidence else " ",
                self.get_component_rich_style("logview--evidence") if line.evidence else gutter,
            ),
            Segment(" ", gutter),
        ]
        if self._process_width:
            label = self._labels.get(line.process, "")
            out.append(
                Segment(
                    f"{label:<{self._process_width}}", Style(color=self._colours.get(line.process))
                )
            )
            out.append(Segment(" ", gutter))
        return out

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        pos, part = self._line_at(scroll_y + y)
        if pos >= len(self.shown):
            return Strip.blank(width, self.rich_style)
        index = self.shown[pos]
        line = self.lines[index]
        body_width = max(1, width - self.gutter_width)
        strip = self._text_strip(index)
        if self.wrap:
            body = strip.crop_extend(part * body_width, (part + 1) * body_width, self.rich_style)
        else:
            body = strip.crop_extend(scroll_x, scroll_x + body_width, self.rich_style)
        out = Strip.join([Strip(self._gutter(line, part == 0)), body])
        if pos == self.cursor:
            out = out.apply_style(self.get_component_rich_style("logview--cursor"))
        return out.apply_offsets(scroll_x, scroll_y + y)

    # moving -------------------------------------------------------------------------------

    class Moved(Message):
        """The cursor moved, or what the view shows changed."""

    def move_to(self, pos: int, *, center: bool = False) -> None:
        """Put the cursor on the shown line at ``pos`` and scroll it into view."""
        if not self.shown:
            return
        before, top = self.cursor, self.scroll_offset.y
        self.cursor = max(0, min(pos, len(self.shown) - 1))
        row = self._row_of(self.cursor)
        height = self.scrollable_content_region.height or 1
        span = (self._rows[self.cursor + 1] - row) if self.wrap else 1
        if center:
            self.scroll_to(y=max(0, row - height // 3), animate=False, immediate=True)
        elif row < self.scroll_offset.y:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row + span > self.scroll_offset.y + height:
            self.scroll_to(y=row + span - height, animate=False, immediate=True)
        if self.scroll_offset.y == top and before < len(self.shown):
            # nothing scrolled: only the rows that gain or lose the cursor are drawn again
            self._refresh_position(before)
            self._refresh_position(self.cursor)
        else:
            self.refresh()
        self.post_message(self.Moved())

    def _refresh_position(self, pos: int) -> None:
        row = self._row_of(pos)
        self.refresh_lines(row, (self._rows[pos + 1] - row) if self.wrap else 1)

    def go_to_line(self, number: int) -> None:
        """The cursor on log line ``number`` (or the first shown line after it)."""
        pos = next(
            (k for k, i in enumerate(self.shown) if self.lines[i].number >= number),
            len(self.shown) - 1,
        )
        self.move_to(pos, center=True)

    def _next(self, positions: Sequence[int], step: int) -> int | None:
        """The first of ``positions`` (sorted) after the cursor (``step`` 1) or before it
        (-1), round the end."""
        if not positions:
            return None
        if step > 0:
            k = bisect_right(positions, self.cursor)
            return positions[k % len(positions)]
        k = bisect_right(positions, self.cursor - 1) - 1
        return positions[k]

    def next_match(self, step: int) -> bool:
        pos = self._next(self.matches, step)
        if pos is None:
            return False
        self.match_index = self.matches.index(pos)
        self.move_to(pos, center=True)
        return True

    def next_evidence(self, step: int) -> bool:
        marked = [k for k, i in enumerate(self.shown) if self.lines[i].evidence]
        pos = self._next(marked, step)
        if pos is None:
            return False
        self.move_to(pos, center=True)
        return True

    def next_process(self, step: int) -> bool:
        """The cursor on the next (``step`` 1) or previous (-1) line another process wrote."""
        here = self.current
        if here is None:
            return False
        pos = self.cursor + step
        while 0 <= pos < len(self.shown):
            line = self.lines[self.shown[pos]]
            if line.number and line.process != here.process:
                self.move_to(pos, center=True)
                return True
            pos += step
        return False

    # what is shown -----------------------------------------------------------------------

    def set_level(self, min_level: int) -> None:
        """Show the lines of at least ``min_level`` (evidence lines and gap markers always)."""
        index = self.shown[self.cursor] if self.shown else 0
        self.min_level = min_level
        self.shown = [
            k
            for k, ln in enumerate(self.lines)
            if ln.level >= min_level or ln.evidence or not ln.number
        ]
        self._find()
        self._layout()
        self.move_to(max(0, bisect_right(self.shown, index - 1)), center=True)

    def set_wrap(self, wrap: bool) -> None:
        self.wrap = wrap
        if wrap:
            self.scroll_to(x=0, animate=False, immediate=True)
        self._layout()
        self.move_to(self.cursor, center=True)

    def search(self, query: str) -> None:
        """Mark the lines holding ``query`` (any case) and move to the first at or after the
        cursor."""
        self.pattern = query.lower()
        self._strips.clear()
        self._find()
        self.match_index = -1
        if self.matches:
            self.match_index = bisect_left(self.matches, self.cursor) % len(self.matches)
            self.move_to(self.matches[self.match_index], center=True)
        self.refresh()
        self.post_message(self.Moved())

    def _find(self) -> None:
        if self.pattern:
            if self._lower is None:
                self._lower = [ln.text.lower() for ln in self.lines]
            lower, query = self._lower, self.pattern
            self.matches = [k for k, i in enumerate(self.shown) if query in lower[i]]
        else:
            self.matches = []
        self.match_index = -1

    # keys ---------------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, step: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        if not self.wrap:
            self.move_to(self.cursor + step * height)
            return
        pos, _part = self._line_at(max(0, self._row_of(self.cursor) + step * height))
        self.move_to(pos if pos != self.cursor else self.cursor + step)

    def action_sideways(self, step: int) -> None:
        """Scroll long lines a quarter of the text's width left or right."""
        body = max(1, self.scrollable_content_region.width - self.gutter_width)
        x = self.scroll_offset.x + step * max(4, body // 4)
        self.scroll_to(x=max(0, x), animate=False, immediate=True)

    def action_edge(self, end: bool) -> None:
        self.move_to(len(self.shown) - 1 if end else 0)

    def on_click(self, event: Click) -> None:
        pos, _part = self._line_at(self.scroll_offset.y + event.y)
        if pos < len(self.shown):
            self.move_to(pos)
