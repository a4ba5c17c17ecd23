"""Lines a terminal or a mail/ticket system cut at a fixed width, joined again.

A log copied from a console that wraps (``tmux capture-pane`` without ``-J``, the Windows
console, a fixed-width export) has every line longer than the width cut into pieces of exactly
that width: a traceback's ``File`` lines, the exception message and the logger headers are
split, and what a rule looks for is no longer on one line. Such a log shows its width: no line
is longer, and many more lines are exactly that long (with different texts) than of any length
a little shorter.
Those lines are joined to the line after them.

>>> lines = [(1, "x" * 10), (2, "ValueError: " + "a" * 68), (3, "bc"), (4, "  File " + "p" * 73), (5, "q")]
>>> lines += [(6, "y" * 80), (7, "end")]
>>> [(n, len(t)) for n, t in join_cut_lines(lines)]
[(1, 10), (2, 82), (4, 81), (6, 83)]
"""

from __future__ import annotations

from tracelens.pyregex import compile_re

_WIDTHS = frozenset({80, 100, 120, 128, 132, 140, 150, 160, 180, 200, 240})
"""Console widths a cut log is seen at (the classic 80 and 132 columns, the common window and
export widths): a log whose longest lines happen to share another length is left alone."""


_BORDERS = frozenset("│┃║|╮╯┐┘┓┛╗╝+")
"""Last characters of a box drawn to the full width (rich tracebacks, tables): such a line ends
where it was meant to, it was not cut."""


_DIGITS = compile_re(r"\d+")
_LETTERS = compile_re(r"[A-Za-z]+")


def _shape(raw: str) -> str:
    """How a line starts, digits and words made alike: ``INFO 01-20 13:0`` and
    ``INFO 01-21 09:0`` start alike, a cut line's rest (``dels/new', te``) does not."""
    return _LETTERS.sub("a", _DIGITS.sub("0", raw[:14]))


_RULES = frozenset("=_-~*#")
"""Characters of a rule drawn to the full width (pytest's sections, banners): a line ending in
three of them, or pytest's ``_ _ _`` between entries, was not cut either."""


def _cut(raw: str, width: int) -> bool:
    if len(raw) != width or raw[-1] in _BORDERS:
        return False
    return not ((raw[-1] in _RULES and raw.endswith(raw[-1] * 3)) or raw.startswith("_ _ _"))


def _starts_alike(raw: str, after: str) -> bool:
    """The line after starts with this line's first 8 characters (a process tag, a time stamp,
    an indentation): a line of its own, though this one happens to be as long as the width."""
    return len(raw) >= 8 and after[:8] == raw[:8]


def join_cut_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``lines`` with the pieces of each line cut at the log's width joined, when the log
    shows one: at least 2 different lines of exactly the longest length, a console width
    (:data:`_WIDTHS`), at least three times as many lines of that length as of each length
    a little shorter on average (80-99 % of it: lines that end where their text ends spread
    over every length), and most of them followed by a line that does not start as they do
    (the rest of a cut line, not the next line of a log whose lines share one length). A joined line keeps its first number."""
    if len(lines) < 4:
        return lines
    width = max(len(raw) for _, raw in lines)
    if width not in _WIDTHS:
        return lines
    full = [k for k, (_, raw) in enumerate(lines) if _cut(raw, width)]
    low = width * 4 // 5
    near = sum(1 for _, raw in lines if low <= len(raw) < width)
    if len({lines[k][1] for k in full}) < 2 or len(full) * (width - low) < 3 * near:
        return lines  # not a spike at the width: lines that end where their text ends
    starts = sum(
        1 for k in full if k + 1 < len(lines) and _shape(lines[k + 1][1]) == _shape(lines[k][1])
    )
    if 3 * starts > len(full):
        return lines  # the lines after them start as they do: whole lines of one length
    out: list[tuple[int, str]] = []
    first: int | None = None
    parts: list[str] = []
    for k, (n, raw) in enumerate(lines):
        if first is None:
            first = n
        parts.append(raw)
        if not _cut(raw, width) or _starts_alike(
            raw, lines[k + 1][1] if k + 1 < len(lines) else ""
        ):
            out.append((first, "".join(parts)))
            first, parts = None, []
    if parts and first is not None:
        out.append((first, "".join(parts)))
    return out
