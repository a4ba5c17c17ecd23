"""A guard for tests of inputs that once made a stage quadratic: it fails the test after a
generous time instead of letting the suite hang. It is not a speed measurement (the figures
are printed by benchmarks/bench_pathological.py): each guarded input is sized so that the code
now needs a small fraction of the guard and the code before the fix many times it."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

GUARD_S = 30.0


class StillRunning(Exception):
    """The guarded code ran past its guard."""


@contextmanager
def guard(seconds: float = GUARD_S) -> Iterator[None]:
    """Raise :class:`StillRunning` in the guarded block once ``seconds`` have passed."""

    def expired(_signum, _frame):
        raise StillRunning(
            f"still running after {seconds:g} s: work that grows faster than the input?"
        )

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
