"""The byte ranges of a large log worth parsing: windows around the scan's hits, merged,
kept within a budget, their edges on line boundaries."""

from __future__ import annotations

from typing import BinaryIO

WINDOW_BUDGET = 48 << 20
"""Most bytes of windows parsed from one log."""

# (bytes before, bytes after) each kind of hit
_CONTEXT = {1: (8 << 10, 256 << 10), 2: (8 << 10, 16 << 10), 3: (0, 512)}


class Window:
    """A byte range to parse; ``anchor`` is the offset of a line whose number is known."""

    __slots__ = ("start", "end", "anchor", "anchor_line")

    def __init__(self, start: int, end: int, anchor: int, anchor_line: int):
        self.start, self.end, self.anchor, self.anchor_line = start, end, anchor, anchor_line


def windows_around(
    hits: list[tuple[int, int, int]], fp: BinaryIO, total: int, nl: bytes
) -> list[Window]:
    """Windows around hits ``(offset of the line, line number, kind)`` in a log of ``total``
    bytes with line ends ``nl``."""
    windows: list[Window] = []
    for off, ln, kind in hits:
        before, after = _CONTEXT.get(kind, (0, 16 << 10))
        w = Window(max(0, off - before), min(total, off + after), off, ln)
        if windows and w.start <= windows[-1].end:
            windows[-1].end = max(windows[-1].end, w.end)
        else:
            windows.append(w)
    windows = _within_budget(windows)
    for w in windows:
        _snap(fp, w, total, nl)
    return windows


def _within_budget(windows: list[Window]) -> list[Window]:
    """Keep the first windows (startup facts) and the last (the crash) within the budget."""
    if sum(w.end - w.start for w in windows) <= WINDOW_BUDGET:
        return windows
    kept_head: list[Window] = []
    kept_tail: list[Window] = []
    budget_head, budget_tail = WINDOW_BUDGET // 8, WINDOW_BUDGET - WINDOW_BUDGET // 8
    for w in windows:
        if budget_head - (w.end - w.start) < 0:
            break
        budget_head -= w.end - w.start
        kept_head.append(w)
    for w in reversed(windows[len(kept_head) :]):
        if budget_tail - (w.end - w.start) < 0:
            break
        budget_tail -= w.end - w.start
        kept_tail.append(w)
    return kept_head + kept_tail[::-1]


def _snap(fp: BinaryIO, w: Window, total: int, nl: bytes) -> None:
    """Move a window's edges to line boundaries."""
    if w.start > 0:
        fp.seek(w.start - 1)
        probe = fp.read(min(w.anchor - w.start + 1, 1 << 20))
        at = probe.find(nl)
        w.start = w.start + at if at >= 0 else w.anchor
    if w.end < total:
        fp.seek(w.end)
        probe = fp.read(1 << 16)
        at = probe.find(nl)
        w.end = w.end + at + 1 if at >= 0 else min(total, w.end + len(probe))
