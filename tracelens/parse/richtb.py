"""Tracebacks drawn by ``rich`` (``rich.traceback.install()``: accelerate, DeepSpeed, typer and
other tools print them when rich is installed) rewritten as the plain tracebacks Python prints,
so the grammar parses them like any other.

A rich traceback is a box::

    ╭─────────── Traceback (most recent call last) ───────────╮
    │ /srv/app/train.py:171 in main                            │
    │                                                          │
    │   170 │   model = build(cfg)                             │
    │ ❱ 171 │   model, opt = accelerator.prepare(model, opt)   │
    │                                                          │
    │ /opt/venv/lib/python3.10/site-packages/deepspeed/runtime │
    │ /config.py:883 in _batch_assertion                       │
    ╰──────────────────────────────────────────────────────────╯
    AssertionError: Check batch related parameters. ...

Each frame's header (``PATH:LINE in FUNCTION``, wrapped over lines when long) becomes a
``File "PATH", line LINE, in FUNCTION`` line and the marked (``❱``) source line its source;
the other lines of the box (context lines, local-variable panels) are dropped. The exception
line after the box and chain separators between boxes are plain text already. Line numbers
are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from tracelens.models import Record

_TOP = r"^\s*╭─*\s*Traceback \(most recent call last\)"
_HEADER = r"^(?P<file>(?:/|[A-Za-z]:\\|\.{0,2}/|<|~)\S*):(?P<lineno>\d+) in ?(?P<func>\S*)$"
_MARKED = r"^❱\s*\d+\s*│?(?P<code>.*)$"
_IDENT = r"^[\w<>.]+$"
_CODE = r"^(?:❱\s*)?\d+(?:\s|$)"  # a source line: its number in the gutter


def has_rich_traceback(records: Sequence[Record]) -> bool:
    return any("╭" in r.text and re.match(_TOP, r.text) for r in records)


def _inner(text: str) -> str | None:
    """What stands between the box's side borders and their one-space padding, its right
    padding kept (a line filled to the edge continues on the next); None for a line that is
    not a box line."""
    s = text.strip()
    if not s.startswith("│"):
        return None
    s = s[1:]
    if s.endswith("│"):
        s = s[:-1]
    return s[1:-1] if s.startswith(" ") and s.endswith(" ") else s.strip()


def _exception_after(records: Sequence[Record], k: int, width: int, out: list[Record]) -> int:
    """Append the exception line that follows a box, its message unwrapped: rich wraps it at the
    box's width, so a line whose next word would not have fitted continues on the next line.
    Returns the index after what was consumed."""
    if k >= len(records) or not records[k].text.strip():
        return k
    first = records[k]
    text = first.text.rstrip()
    k += 1
    while k < len(records):
        cont = records[k]
        nxt = cont.text.strip()
        if (
            not nxt
            or re.match(_TOP, nxt)
            or nxt.startswith(("The above exception", "During handling"))
        ):
            break
        if cont.level is not None or cont.time is not None or cont.stream != first.stream:
            break  # the next log record, not the rest of the message
        if len(text) + 1 + len(nxt.split()[0]) <= width:  # it would have fitted: a real newline
            break
        text = f"{text} {nxt}"
        k += 1
    out.append(replace(first, text=text))
    return k


_SEPARATORS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def _separator(rec: Record, nxt: Record | None) -> Record | None:
    """A chain separator rich wrapped over two lines, as one record; else None."""
    head = rec.text.strip()
    if nxt is None or not head.startswith(("The above exception", "During handling")):
        return None
    whole = f"{head} {nxt.text.strip()}"
    return replace(rec, text=whole) if whole in _SEPARATORS and head not in _SEPARATORS else None


def _frames(lines: list[tuple[Record, str]], out: list[Record]) -> None:
    """Frame headers and marked source lines of one box, as plain traceback lines."""
    j = 0
    while j < len(lines):
        rec, text = lines[j]
        j += 1
        m = re.match(_HEADER, text)
        if m is not None:
            func = m.group("func")
            if not func and j < len(lines) and re.match(_IDENT, lines[j][1]):
                func = lines[j][1]  # "PATH:LINE in" with the function on the next line
                j += 1
            out.append(
                replace(
                    rec,
                    text=f'  File "{m.group("file")}", line {m.group("lineno")}, in {func or "?"}',
                )
            )
            continue
        mark = re.match(_MARKED, text)
        if mark is not None:
            out.append(replace(rec, text="    " + mark.group("code").replace("│", " ").strip()))


def unbox(records: Sequence[Record]) -> Sequence[Record]:
    """``records`` with every rich traceback box rewritten as a plain traceback."""
    if not has_rich_traceback(records):
        return records
    out: list[Record] = []
    k = 0
    n = len(records)
    while k < n:
        rec = records[k]
        if not re.match(_TOP, rec.text):
            joined = _separator(rec, records[k + 1] if k + 1 < n else None)
            if joined is not None:  # a chain separator wrapped at the console's width
                out.append(joined)
                k += 2
                continue
            out.append(rec)
            k += 1
            continue
        out.append(replace(rec, text="Traceback (most recent call last):"))
        inner_width = len(rec.text.strip()) - 4  # "│ " … " │"
        k += 1
        lines: list[tuple[Record, str]] = []  # the box's logical lines
        joining = False
        while k < n:
            rec = records[k]
            if rec.text.lstrip().startswith("╰"):
                _frames(lines, out)
                lines = []
                k = _exception_after(records, k + 1, len(rec.text.strip()), out)
                break
            raw = _inner(rec.text)
            if raw is None:  # the box ended without its bottom border (a cut log)
                break
            k += 1
            text = raw.strip()
            code = bool(re.match(_CODE, text))
            if joining and not code and text:
                prev_rec, prev = lines.pop()
                lines.append(
                    (prev_rec, prev + text)
                )  # a word wider than the box, broken at its edge
            else:
                lines.append((rec, text))
            joining = not code and len(raw.rstrip()) >= inner_width
        _frames(lines, out)
    return out
