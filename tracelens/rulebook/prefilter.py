"""The prefilter: which rules' ``needs`` literals all occur in a log, in one RE2 set search."""

from __future__ import annotations

import re2


class Prefilter:
    """Which rules' ``needs`` literals all occur in a text: one RE2 set search for all rules."""

    def __init__(self, needs: list[list[str | list[str]]]):
        # each rule: a list of alternatives groups; a group holds if any literal occurs
        self.needs = [[[n] if isinstance(n, str) else list(n) for n in ns] for ns in needs]
        self.literals: list[str] = sorted({lit for ns in self.needs for grp in ns for lit in grp})
        self._index = {lit: k for k, lit in enumerate(self.literals)}
        self._set = None
        if self.literals:
            s = re2.Set.SearchSet()
            for lit in self.literals:
                s.Add(re2.escape(lit))
            s.Compile()
            self._set = s

    def present(self, text: str) -> set[str]:
        """Literals that occur in ``text``. RE2's set search reports every pattern that
        matches somewhere in one pass."""
        if self._set is None:
            return set()
        found = self._set.Match(text) or []
        return {self.literals[k] for k in found}

    def candidates(self, text: str) -> list[int]:
        present = self.present(text)
        return [
            k
            for k, ns in enumerate(self.needs)
            if all(any(lit in present for lit in grp) for grp in ns)
        ]
