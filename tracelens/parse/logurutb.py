"""Tracebacks as loguru prints them (``logger.exception``, ``@logger.catch``; text-generation-
inference's server among others), rewritten as the plain tracebacks Python prints, so the
grammar parses them like any other::

    Traceback (most recent call last):

      File "/srv/cli.py", line 119, in serve
        server.serve(

    > File "/srv/server.py", line 266, in serve_inner
        model = get_model(
                └ <function get_model at 0x7f3a>

    NotImplementedError: sharded is not supported for AutoModel

A blank line follows the header and each frame, ``>`` marks the frame where the exception was
caught, and with ``diagnose=True`` lines of ``│`` and ``└`` show the values of the names in
the source line. Inside such a traceback the blank and value lines are dropped and the mark
taken off; line numbers are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tracelens.models import Record
from tracelens.parse.marks import TB_HEAD
from tracelens.pyregex import compile_re

_FRAME = compile_re(r'(?:>| ) File "[^"]*", line \d+')
_VALUES = compile_re(r"\s*[│└├┬┼─\s]*[└│]")
"""A line of loguru's values under a source line (``    │     └ 3``)."""


def _loguru(records: Sequence[Record], k: int) -> bool:
    """A loguru traceback starts at ``k``: its frames have a blank line between them or one
    of them is marked ``>`` (a frame line or a blank line right after the header, then up to
    the exception line)."""
    if records[k].text.strip() != TB_HEAD:
        return False
    blank = marked = False
    for rec in records[k + 1 : k + 400]:
        text = rec.text
        if not text.strip():
            blank = True
        elif text.startswith("> File"):
            marked = True
        elif not text[:1].isspace():
            break  # the exception line
    return marked or (
        blank and k + 2 < len(records) and _FRAME.match(records[k + 2].text) is not None
    )


def plain(records: Sequence[Record]) -> Sequence[Record]:
    """``records`` with every loguru traceback rewritten as a plain one."""
    starts = {
        k for k, r in enumerate(records) if r.text.startswith("Traceback") and _loguru(records, k)
    }
    if not starts:
        return records
    out: list[Record] = []
    inside = False
    for k, rec in enumerate(records):
        if k in starts:
            inside = True
            out.append(rec)
            continue
        if not inside:
            out.append(rec)
            continue
        text = rec.text
        if not text.strip() or _VALUES.match(text):
            continue
        if text.startswith("> File"):
            out.append(replace(rec, text="  " + text[2:]))
        elif text[:1].isspace():
            out.append(rec)
        else:
            inside = False  # the exception line: the frames are over
            out.append(rec)
    return out
