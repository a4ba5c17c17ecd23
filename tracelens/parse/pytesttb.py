"""pytest's failure reports rewritten as the plain tracebacks Python prints, so the grammar
parses them like any other (the ``E   `` prefix of the exception lines is an envelope of the
reader already).

``--tb=short`` names each frame ``PATH:LINE: in FUNCTION`` with its source line below::

    ________________________________ test_forward ________________________________
    tests/test_model.py:12: in test_forward
        out = model(x.cuda())
    /srv/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:319: in _lazy_init
        torch._C._cuda_init()
    E   RuntimeError: Found no NVIDIA driver on your system.

``--tb=long`` (and the first and last entries of the default, ``auto``) shows the function's
source, marks the line with ``>`` and gives ``PATH:LINE:`` after it; the last entry's location
comes after the exception lines and ends with the exception's type::

        def _lazy_init():
    >       torch._C._cuda_init()
    E       RuntimeError: Found no NVIDIA driver on your system.

    /srv/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:319: RuntimeError

Each test's section (its ``___ name ___`` title) becomes a ``Traceback (most recent call
last):`` header, each entry a ``File "…", line N, in FUNCTION`` line with its marked source
line; the exception lines follow the last frame (moved after it when pytest printed the frame
last), an assertion's ``assert …`` line gets the type the location names. A section is
rewritten only when it holds a pytest location line and no traceback of Python's own
(``--tb=native``); line numbers are kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from tracelens.models import Record
from tracelens.parse.marks import CAUSE, CONTEXT, TB_HEAD
from tracelens.pyregex import compile_re

_SECTION = compile_re(r"_+ (?P<name>[^\s_].*?) _+$")
"""A test's title: its name between rules of underscores (at least one on each side)."""
_ENTRY_SEP = compile_re(r"(?:_ ){3,}_?$")
_FILE = r"(?P<file>(?:[A-Za-z]:)?[^\s:][^:]*?\.pyx?)"
_SHORT = compile_re(_FILE + r":(?P<line>\d+): in (?P<func>\S+)$")
_LONG = compile_re(_FILE + r":(?P<line>\d+):(?: (?P<etype>[A-Za-z_][\w.]*))?$")
_DEF = compile_re(r"\s+(?:async\s+)?def (?P<func>\w+)\(")
_MARK = compile_re(r">\s+(?P<code>\S.*)$")
_ARGS = compile_re(r"[A-Za-z_]\w* = ")
"""A long entry's arguments above its source ("dtype = torch.float16, q = tensor(...)")."""
_RULE = compile_re(r"[=_-]+ \S.*\S [=_-]+$")
"""A section rule of pytest's report (a test's title, captured output, the summary)."""
_WORKER = compile_re(r"\[[\w-]+\] \S+ -- Python \d")
"""pytest-xdist's line under a test's title naming the worker that ran it ("[gw3] linux --
Python 3.11.9 /srv/venv/bin/python")."""
_EXC_LINE = compile_re(r"[A-Za-z_][\w.]*:(?:\s|$)")
"""A line that names its exception already ("torch._dynamo.exc.BackendCompilerFailed: …")."""


def _title(text: str) -> bool:
    if not text.startswith("_") or (m := _SECTION.match(text)) is None:
        return False
    return "test" in m.group("name").lower()  # test_x, Class.test_x[param], ERROR at setup of …


def _sections(texts: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each test section worth rewriting: its title up to the next rule."""
    out = []
    for k, text in enumerate(texts):
        if not _title(text):
            continue
        end = k + 1
        while end < len(texts) and (not _RULE.match(texts[end]) or _ENTRY_SEP.match(texts[end])):
            end += 1
        body = texts[k + 1 : end]
        if any(t.strip() == TB_HEAD or t.lstrip().startswith('File "') for t in body):
            continue  # Python's own traceback (--tb=native): parsed as it is
        if any(_SHORT.match(t) or _LONG.match(t) for t in body):
            out.append((k, end))
    return out


def _frame(rec: Record, m: re.Match[str], func: str) -> Record:
    return replace(rec, text=f'  File "{m.group("file")}", line {m.group("line")}, in {func}')


def _rewrite(records: Sequence[Record], texts: Sequence[str]) -> list[Record]:
    """One section (title first) as a plain traceback."""
    out = [replace(records[0], text=TB_HEAD)]
    func = mark = None
    held: list[Record] = []  # exception lines printed before their frame's location
    code_next = False  # the line after a short entry's location is its source line
    given = False  # exception lines given since the last frame
    for rec, text in zip(records[1:], texts[1:]):
        if not text.strip() or _ENTRY_SEP.match(text) or _WORKER.match(text):
            continue
        if text in (CAUSE, CONTEXT):  # the lines the lexer takes for a chain
            out += held + [rec, replace(rec, text=TB_HEAD)]
            held, func, mark, given = [], None, None, False
            continue
        m = _SHORT.match(text)
        if m:
            out.append(_frame(rec, m, m.group("func")))
            code_next, given = True, False
            continue
        if text[0] in " \t":  # source lines: the short entry's own, or a long entry's block
            if code_next:
                out.append(replace(rec, text="    " + text.strip()))
            elif (d := _DEF.match(text)) is not None:
                func = d.group("func")
            code_next = False
            continue
        code_next = False
        m = _MARK.match(text)
        if m:
            mark = replace(rec, text="    " + m.group("code").strip())
            continue
        if mark is None and _ARGS.match(text):
            continue
        m = _LONG.match(text)
        if m and given:
            continue  # after exception lines already given: the location adds no frame
        if m:
            out.append(_frame(rec, m, func or "?"))
            if mark is not None:
                out.append(mark)
            etype = m.group("etype")
            if held and etype and not _EXC_LINE.match(held[0].text):
                held[0] = replace(held[0], text=f"{etype}: {held[0].text}")  # "assert x == y"
            out += held
            held, func, mark, given = [], None, None, bool(held)
            continue
        if mark is not None:
            held.append(rec)  # the last long entry: its location comes after these lines
        elif text.startswith("assert ") and not given:
            out.append(replace(rec, text=f"AssertionError: {text}"))  # pytest's rewritten assert
            given = True
        else:
            out.append(rec)
            given = True
    return out + held


def plain(records: Sequence[Record]) -> Sequence[Record]:
    """``records`` with every pytest failure section rewritten as a plain traceback."""
    if not any(r.text.startswith(("_ ", "__")) for r in records):
        return records
    texts = [r.text.rstrip() for r in records]
    sections = _sections(texts)
    if not sections:
        return records
    out: list[Record] = []
    pos = 0
    for start, end in sections:
        out += records[pos:start]
        out += _rewrite(records[start:end], texts[start:end])
        pos = end
    return out + list(records[pos:])
