"""Tracebacks printed by IPython and Jupyter (notebooks, Colab) rewritten as the plain
tracebacks Python prints, so the grammar parses them like any other.

IPython 8 and later::

    ---------------------------------------------------------------------------
    RuntimeError                              Traceback (most recent call last)
    Cell In[1], line 2
          1 x = 1
    ----> 2 prepare(16)

    File /srv/app/train.py:10, in prepare(y)
          9 except AssertionError as exc:
    ---> 10     raise RuntimeError("batch setup failed") from exc

    RuntimeError: batch setup failed

IPython 7 (long the Colab default) names the frame as ``PATH in FUNCTION(ARGS)`` and gives the
line number only on the marked (``---->``) source line. Each frame becomes a ``File "…", line
N, in FUNCTION`` line with its marked source line; context lines and blank lines inside the
traceback are dropped; the exception line and chain separators are plain text already. Line
numbers are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from tracelens.models import Record
from tracelens.parse.marks import TB_HEAD

_HEAD = r"^(?P<type>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)\s*$"
# "File /path/mod.py:12, in func(args)"; module-level code has no ", in ..." ("File /path/mod.py:148")
_FRAME_NEW = r"^File (?P<file>.+?):(?P<line>\d+)(?:, in (?P<func>[^\s(]+)|\s*$)"
_CELL = r"^(?P<cell>Cell In ?\[\d*\]), line (?P<line>\d+)"
_FRAME_OLD = (
    r"^(?P<file>(?:/|~|[A-Za-z]:\\|<ipython-input-|<string>)\S*) in (?P<func><[^>]*>|[^\s(]+)"
)
_MARKED = r"^-+>\s*(?P<line>\d+)(?: (?P<code>.*))?$"
_CONTEXT = r"^\s*(?:\d+(?:\s|$)|\(\.\.\.\))"  # indented, or not: a paste that lost it
_COLLAPSED = r"^\d+ frames?$"  # Colab folds the middle frames: "34 frames"
# IPython 8 folds repeated frames: "[... skipping similar frames: Module._call_impl at line 1750
# (1 times), ...]" (and "[... skipping hidden N frame]" for frames marked hidden)
_SKIPPED = r"^\s*\[\.\.\. skipping (?:similar|hidden) \d* ?frames?"


def has_ipython_traceback(records: Sequence[Record]) -> bool:
    return any(
        "Traceback (most recent call last)" in r.text and re.match(_HEAD, r.text) for r in records
    )


def _frame(rec: Record, file: str, line: str, func: str) -> Record:
    # IPython 8+ prints qualified names (JSONDecoder.decode); Python prints the function's own
    return replace(rec, text=f'  File "{file}", line {line}, in {func.rsplit(".", 1)[-1]}')


def plain(records: Sequence[Record]) -> Sequence[Record]:
    """``records`` with every IPython traceback rewritten as a plain one."""
    if not has_ipython_traceback(records):
        return records
    out: list[Record] = []
    inside = False
    pending: tuple[Record, str, str] | None = None  # an IPython 7 frame waiting for its line number
    for rec in records:
        text = rec.text.rstrip()
        if re.match(_HEAD, text):
            out.append(replace(rec, text=TB_HEAD))
            inside, pending = True, None
            continue
        if not inside:
            out.append(rec)
            continue
        m = re.match(_FRAME_NEW, text)
        if m:
            out.append(_frame(rec, m.group("file"), m.group("line"), m.group("func") or "<module>"))
            pending = None
            continue
        m = re.match(_CELL, text)
        if m:
            out.append(_frame(rec, f"<{m.group('cell')}>", m.group("line"), "<module>"))
            pending = None
            continue
        m = re.match(_FRAME_OLD, text)
        if m:
            pending = (rec, m.group("file"), m.group("func"))
            continue
        m = re.match(_MARKED, text)
        if m:
            if pending is not None:
                prec, file, func = pending
                out.append(_frame(prec, file, m.group("line"), func))
                pending = None
            out.append(replace(rec, text="    " + (m.group("code") or "").strip()))
            continue
        if (
            not text.strip()
            or re.match(_CONTEXT, text)
            or re.match(_COLLAPSED, text)
            or re.match(_SKIPPED, text)
        ):
            continue
        inside = False  # the exception line: the traceback's frames are over
        out.append(rec)
    return out
