"""The category the words of known failures give an unrecognized failure.

A naive Bayes table over the originating failures of every rule's example log (the entries of
the nearest-failure index): the words of each example's message, its exception type, the
package and the file that raised it, counted per category, each rule weighing one whatever the
number of its examples. A failure no rule knows, and that the guess
(``tracelens.rulebook.guess``) has no word for, takes the category whose known failures its
words are likeliest in. The table is built from the index on first need, so a user's rule pack
teaches it too.

Measured on the held-out logs, each against the rules as they were before its round (see
docs/unrecognized.md): the guess then these words are right for more failures than the guess
alone or the words alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from tracelens.pyregex import compile_re

_NOISE = frozenset({"site", "packages", "dist", "python", "lib", "usr", "local", "home", "opt"})
"""Path words every install has: they say nothing of the failure."""


@cache
def _word() -> re.Pattern[str]:
    """A word of a message: letters and underscores, three or more (numbers, ids and hex are
    left out); compiled on first use."""
    return compile_re(r"[a-z][a-z_]{2,}")


@cache
def _letters() -> re.Pattern[str]:
    return compile_re(r"[a-z]{3,}")


def features(text: str, typ: str, package: str, file: str) -> frozenset[str]:
    """What the table counts of one failure: the words of its message (``text`` is the
    index's ``Type: message`` or failure line), its exception type (last dotted part), the
    package and the last three parts of the file that raised it."""
    low = text.lower()
    if typ and low.startswith(typ.lower() + ": "):
        low = low[len(typ) + 2 :]
    out = set(_word().findall(low[:400]))
    if typ:
        out.add("T=" + typ.rsplit(".", 1)[-1])
    if package:
        out.add("P=" + package)
    if file:
        for part in re.split(r"[\\/]", file.lower())[-3:]:
            out.update("F=" + w for w in _letters().findall(part) if w not in _NOISE)
    return frozenset(out)


class Answer(NamedTuple):
    """The likeliest category, its probability, and how many of the failure's features the
    table knows (a bare line's few words say little)."""

    category: str
    probability: float
    known: int


@dataclass(frozen=True)
class Words:
    """Per category: its weight (rules), the weight of each feature, and the sum of those."""

    prior: dict[str, float]
    counts: dict[str, dict[str, float]]
    totals: dict[str, float]
    vocabulary: frozenset[str]

    @classmethod
    def build(cls, entries) -> Words:
        """The table of the index's entries (``rule_id``, ``category``, ``text``, ``type``,
        ``package``, ``file``)."""
        per_rule = Counter(e.rule_id for e in entries)
        prior: dict[str, float] = defaultdict(float)
        counts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for e in entries:
            weight = 1.0 / per_rule[e.rule_id]
            prior[e.category] += weight
            for f in features(e.text, e.type, e.package, e.file):
                counts[e.category][f] += weight
        vocabulary = frozenset(f for c in counts.values() for f in c)
        return cls(
            prior=dict(prior),
            counts={c: dict(v) for c, v in counts.items()},
            totals={c: sum(v.values()) for c, v in counts.items()},
            vocabulary=vocabulary,
        )

    def category(self, text: str, typ: str, package: str, file: str) -> Answer | None:
        """The likeliest category and its probability, or None when not one feature of the
        failure is in the table (the prior alone says nothing of it)."""
        known = [f for f in features(text, typ, package, file) if f in self.vocabulary]
        if not known or not self.prior:
            return None
        whole = sum(self.prior.values())
        size = len(self.vocabulary)
        scores = {}
        for cat, weight in self.prior.items():
            counts, denominator = self.counts.get(cat, {}), self.totals.get(cat, 0.0) + size
            scores[cat] = math.log(weight / whole) + sum(
                math.log((counts.get(f, 0.0) + 1.0) / denominator) for f in known
            )
        best = max(scores, key=lambda c: (scores[c], c))
        top = scores[best]
        return Answer(best, 1.0 / sum(math.exp(s - top) for s in scores.values()), len(known))
