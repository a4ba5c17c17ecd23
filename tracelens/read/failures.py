"""Failure lines that need no rule: what real programs print when they fail.

A log has failed when it holds an uncaught Python traceback, an error-level record, or one of
the lines of the table in :mod:`tracelens.read.shapes` (C/C++ and CUDA programs, compilers and
linkers, argparse, uvicorn, container runtimes, the kernel's OOM killer, crashes, NCCL,
pydantic, ssh and mpirun launching a job). Each shape carries sample lines
copied from the programs' real output; ``tests/test_failures.py`` checks every sample against
its shape and a table of healthy lines against all of them.

A shape marked ``wrapper`` reports a failure printed above it (a build's
``error: command 'g++' failed``, ``collect2: error: ld returned 1 exit status``): it is never
the originating failure while something else failed first.

Kept light (RE2 and the standard library): the scanner of large logs imports it before the
rest of tracelens.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from tracelens.read.shapes import SHAPES, Shape
from tracelens.regex import compile_regex

__all__ = ["SHAPES", "TRIGGERS", "Shape", "failure_kind"]

TRIGGERS: tuple[bytes, ...] = tuple(sorted({t for s in SHAPES for t in s.triggers}))
"""Every shape's literals, for the scanner of large logs."""


# RE2 takes about 1.3 ms to compile the alternation and 0.1-0.2 ms each shape: both are
# compiled on first use (the scanner of large logs only needs TRIGGERS), each shape when a
# line first reaches it.
@cache
def _any() -> Any:
    """Every shape in one regex: most lines match none, and are done after one search."""
    return compile_regex("|".join(f"(?:{s.pattern})" for s in SHAPES))


@cache
def _shape_regex(k: int) -> Any:
    """Shape ``k``'s own regex."""
    return compile_regex(SHAPES[k].pattern)


def failure_kind(text: str) -> Shape | None:
    """The first shape that ``text`` (one line, envelope removed) matches, or None.

    >>> failure_kind("Segmentation fault (core dumped)").kind
    'crash'
    >>> failure_kind("INFO: started server process") is None
    True
    """
    line = text.strip()
    if not line or _any().search(line) is None:
        return None
    for k, shape in enumerate(SHAPES):
        if _shape_regex(k).search(line) is not None:
            return shape
    return None
