"""The suite's two tiers.

``pytest`` runs the quick tier, what a change is checked with while it is made: one in
``SAMPLE`` of each table of corpus logs and rule examples, and no test marked ``slow`` (a
Ray cluster, a store of every labelled log, the TUI over every planted secret, the longer TUI
walks, the TUI pictures but one of each kind of screen, three kinds of planted secret in four,
and the cases but one of tables whose cases each cost a pool of processes or a large store:
:func:`one_quick`). ``pytest --full`` runs everything: every log, every example, every slow
test; CI runs it. conftest.py sets ``FULL`` from the command line before any test module is
imported, so a table is cut before its tests are collected (collecting every log's tests is
itself seconds).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")

FULL = False
SAMPLE = 32
SMALL = 64  # a table this long or shorter is checked whole in both tiers


def sample(items: Iterable[T]) -> list[T]:
    """Every item under ``--full`` or of a small table; else one in SAMPLE, the first included,
    spread evenly over the sorted table (each folder of the corpus and each area of rules keeps
    some)."""
    items = list(items)
    return items if FULL or len(items) <= SMALL else items[::SAMPLE]


def examples(n: int) -> int:
    """A property test's number of examples: ``n`` under ``--full``, a fifth of it (at least
    ten) in the quick tier. Hypothesis keeps the examples that failed in its database and tries
    them first next time, so a failure found by a long run is not lost in a short one."""
    return n if FULL else max(10, n // 5)


def one_quick(rows: Iterable, keep: int | tuple[int, ...] = 0) -> list:
    """``parametrize`` rows with every row but ``keep`` (a position, or several) marked slow:
    the quick tier runs one case of a table whose cases each cost a process, a pool of them or
    a large store, ``--full`` every case (the ids stay those of the plain rows)."""
    import pytest

    kept = (keep,) if isinstance(keep, int) else keep
    out = []
    for k, row in enumerate(rows):
        args = row if isinstance(row, tuple) else (row,)
        out.append(pytest.param(*args, marks=() if k in kept else pytest.mark.slow))
    return out
