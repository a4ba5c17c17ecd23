"""Confidence that means something: the first diagnosis's raw belief mapped to how often such a
first diagnosis was right on labelled logs.

The raw belief of a rule (1 - the chance that every matched condition is wrong at once) and of
an unrecognized failure (how close the nearest known failure is) rank diagnoses well but are not
probabilities. ``TABLE`` maps them, per kind of first diagnosis, to the share of right answers
measured by ``benchmarks/calibrate_confidence.py`` (which writes this table and
docs/confidence.md): a step function, one ``(raw upper bound, confidence)`` pair per step.
Diagnoses after the first keep their raw belief (the calibration measured first diagnoses only),
so only the first one is mapped.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracelens.models import Diagnosis

# kinds of first diagnosis
EXPLAINS = "cause-explains-origin"
"""A cause rule whose evidence holds the originating failure."""
ELSEWHERE = "cause-elsewhere"
"""A cause rule found elsewhere in the log (no originating failure, or not this one)."""
UNRECOGNIZED = "unrecognized"
"""No rule explains the failure; the confidence is that of the guessed category."""
SYMPTOM = "symptom"
"""A symptom rule first (nothing better matched)."""
KINDS = (EXPLAINS, ELSEWHERE, UNRECOGNIZED, SYMPTOM)

# BEGIN GENERATED TABLE (benchmarks/calibrate_confidence.py --write)
TABLE: dict[str, list[tuple[float, float]]] = {
    "cause-explains-origin": [(0.64, 0.85), (0.84, 0.9), (0.98, 0.95), (1.0, 0.97)],
    "cause-elsewhere": [(0.38, 0.6), (0.45, 0.67), (0.72, 0.74), (1.0, 0.84)],
    "unrecognized": [(0.57, 0.62), (1.0, 0.66)],
    "symptom": [(1.0, 0.04)],
}
# END GENERATED TABLE


def kind_of(first: Diagnosis, explained: bool) -> str:
    if first.rule_id == "unrecognized":
        return UNRECOGNIZED
    if first.secondary:
        return SYMPTOM
    return EXPLAINS if explained else ELSEWHERE


def lookup(steps: Sequence[tuple[float, float]], raw: float) -> float:
    """The confidence of the first step whose upper bound is at least ``raw``.

    >>> lookup([(0.5, 0.3), (1.0, 0.9)], 0.45)
    0.3
    >>> lookup([(0.5, 0.3), (1.0, 0.9)], 0.75)
    0.9
    >>> lookup([], 0.66)
    0.66
    """
    for bound, value in steps:
        if raw <= bound:
            return value
    return steps[-1][1] if steps else raw


def calibrate(diags: list[Diagnosis], explained: bool, table=None) -> None:
    """Map the first diagnosis's raw belief to its measured share of right answers (in place)."""
    if not diags:
        return
    steps = (TABLE if table is None else table).get(kind_of(diags[0], explained))
    if steps:
        diags[0].confidence = round(lookup(steps, diags[0].confidence), 2)
