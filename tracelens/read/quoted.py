"""Logs pasted inside a quote or a code block, taken out of it.

A log quoted in a GitHub issue or an e-mail reply has ``> `` before every line (``>`` alone
for a blank line; ``> > `` when the reply is quoted again); a log pasted as a Markdown indented
code block or into an e-mail has every line indented by four spaces or a tab. Neither is part
of the program's output: a quote hides every header from the envelopes and the lexer, an
indentation makes a traceback's exception line look like one more source line. The reader
takes both off when the log shows them on (nearly) every line, and leaves any other log alone.

>>> unquote([(1, "> Traceback (most recent call last):"), (2, ">"), (3, "> ValueError: x")])
[(1, 'Traceback (most recent call last):'), (2, ''), (3, 'ValueError: x')]
>>> dedent([(1, "    Traceback (most recent call last):"), (2, '      File "a.py", line 1'),
...         (3, ""), (4, "    ValueError: x")])
[(1, 'Traceback (most recent call last):'), (2, '  File "a.py", line 1'), (3, ''), (4, 'ValueError: x')]
>>> dedent([(1, '  File "a.py", line 1'), (2, "    x()")])  # a cut-off traceback: kept
[(1, '  File "a.py", line 1'), (2, '    x()')]
"""

from __future__ import annotations

import os

_QUOTED_SHARE = 0.9
"""Share of the non-blank lines that must start with ``>`` for a log to be read as a quote
(a reply may leave a line or two unquoted)."""
_MAX_DEPTH = 3


def _quoted(lines: list[tuple[int, str]]) -> bool:
    body = [raw for _, raw in lines if raw.strip()]
    marked = sum(1 for raw in body if raw.lstrip(" ")[:1] == ">")
    return bool(body) and marked >= _QUOTED_SHARE * len(body)


def _unquote_line(raw: str) -> str:
    s = raw.lstrip(" ")
    if s[:1] != ">" or len(raw) - len(s) > 3:  # more than 3 blanks: not a Markdown quote mark
        return raw
    return s[2:] if s[1:2] == " " else s[1:]


def unquote(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``lines`` without their quote marks (each level of a quote quoted again), when
    nearly every non-blank line has one (:data:`_QUOTED_SHARE`)."""
    for _ in range(_MAX_DEPTH):
        if not _quoted(lines):
            break
        lines = [(n, _unquote_line(raw)) for n, raw in lines]
    return lines


def _indent(raw: str) -> str:
    return raw[: len(raw) - len(raw.lstrip(" \t"))]


def dedent(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``lines`` without the indentation every non-blank line shares, when it is a code
    block's (four blanks or more, or a tab); a smaller one (a traceback cut above its
    header, whose frames all start with two blanks) is the log's own and is kept."""
    common: str | None = None
    for _, raw in lines:
        if not raw.strip():
            continue
        lead = _indent(raw)
        common = lead if common is None else os.path.commonprefix([common, lead])
        if not common or (len(common) < 4 and "\t" not in common):
            return lines
    if not common:
        return lines
    width = len(common)
    return [(n, raw[width:] if raw.strip() else raw.lstrip(" \t")) for n, raw in lines]
