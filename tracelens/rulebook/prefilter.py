"""The prefilter: which rules' ``needs`` literals all occur in a log, in one Aho-Corasick pass.

The automaton (pyahocorasick, in C) is built once when the rule index is built and stored in
it: loading it back for 10,000 rules takes a millisecond or two, where an RE2 set of the same
literals had to be compiled again by every run (about 55 ms). A literal is present when it
occurs anywhere in the text, as before.

The automaton walks the text one character at a time in Python's string form (about
40 MB/s here: 0.17 ms for a 7 KB log). A process that reads many texts (``ingest``, ``rules
test``) switches, from its third text on, to a set engine that scans the UTF-8 text once:
Hyperscan's literal mode (:mod:`tracelens.literals`: 0.016 ms for a 5.5 KB log, its database
kept in the cache folder), or where Hyperscan is not used an RE2 set of the same literals (3 ms
to build; 0.04 ms a text once its DFA is warm, 0.25 ms before, in every pool worker); a single
``diagnose`` never pays for either.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

_SET_FROM = 3
"""The text from which a prefilter answers with its RE2 set instead of its automaton."""


class Prefilter:
    """Which rules' ``needs`` literals all occur in a text.

    Each rule's ``needs`` is a list of groups; a group holds if any of its literals occurs, a
    rule is a candidate when every group holds (a rule with no ``needs`` always is)."""

    _texts = 0
    """Texts read so far in this process (a class default: an index stored by an earlier
    tracelens has no such attribute)."""
    _set: Any = None
    """The set engine of the literals (:func:`_set_engine`; ``False``: none here); never
    stored."""

    def __init__(self, needs: list[list[str | list[str]]]):
        groups = [[[n] if isinstance(n, str) else list(n) for n in ns] for ns in needs]
        self.literals: list[str] = sorted({lit for gs in groups for grp in gs for lit in grp})
        index = {lit: k for k, lit in enumerate(self.literals)}
        by_literal: list[list[int]] = [[] for _ in self.literals]
        self._always = array("l")
        self._multi: dict[int, tuple[tuple[int, ...], ...]] = {}
        """The literal groups of rules with more than one group (for the others, any literal
        present is enough)."""
        for k, gs in enumerate(groups):
            if not gs:
                self._always.append(k)
                continue
            ids = [tuple(sorted({index[lit] for lit in grp})) for grp in gs]
            if len(ids) > 1:
                self._multi[k] = tuple(ids)
            for lit in sorted({i for grp in ids for i in grp}):
                by_literal[lit].append(k)
        # rules by literal, flattened: rules of literal i are _rules[_starts[i]:_starts[i + 1]]
        self._starts = array("l", [0])
        self._rules = array("l")
        for ks in by_literal:
            self._rules.extend(ks)
            self._starts.append(len(self._rules))
        self._automaton = _automaton(self.literals)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_texts", None)
        state.pop("_set", None)
        return state

    def expect_many(self) -> None:
        """Many texts will be read: the set engine now (a pool's parent makes it once, before
        its workers fork), not from the third text on."""
        if self._set is None and self._automaton is not None:
            self._set = _set_engine(self.literals) or False

    def _found(self, text: str) -> set[int]:
        if self._automaton is None:
            return set()
        if self._set is None:
            self._texts += 1
            if self._texts >= _SET_FROM:
                self._set = _set_engine(self.literals) or False
        if self._set:
            found = self._set(text.encode("utf-8", "surrogatepass"))
            if found is not None:
                return found
            self._set = False  # RE2 gave up (its memory for this set ran out): never again
        return {k for _end, k in self._automaton.iter(text)}

    def present(self, text: str) -> set[str]:
        """Literals that occur in ``text``."""
        return {self.literals[k] for k in self._found(text)}

    def candidates(self, text: str) -> list[int]:
        """Indices of the rules whose ``needs`` hold in ``text``, in rule order."""
        found = self._found(text)
        out = set(self._always)
        starts, rules, multi = self._starts, self._rules, self._multi
        for lit in found:
            for k in rules[starts[lit] : starts[lit + 1]]:
                if k in out:
                    continue
                groups = multi.get(k)
                if groups is None or all(any(i in found for i in grp) for grp in groups):
                    out.add(k)
        return sorted(out)


def _set_engine(literals: list[str]) -> Callable[[bytes], set[int] | None] | None:
    """A function saying which literals occur in UTF-8 bytes (``None``: it gave up): Hyperscan
    (:mod:`tracelens.literals`) where it is used, else an RE2 set; ``None`` when neither can
    take the set."""
    from tracelens.literals import present_finder

    present = present_finder(literals)
    if present is not None:
        return present
    which = _literal_set(literals)
    if which is None:
        return None
    every = len(literals)

    def re2_present(data: bytes) -> set[int] | None:
        found = which.Match(data)
        if not found:
            return None
        found.remove(every)  # the pattern that matches every text
        return set(found)

    return re2_present


def _literal_set(literals: list[str]) -> Any:
    """An RE2 set of the literals, then an empty pattern (index ``len(literals)``) that
    matches every text: RE2 answers no match at all only when it gave up, so an answer that
    lacks the empty pattern is never taken for "no literal occurs". ``None`` when RE2 cannot
    build it."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    which = re2.Set.SearchSet(options)
    try:
        for lit in literals:
            which.Add(re2.escape(lit))
        which.Add("")
        which.Compile()
    except re2.error:
        return None
    return which


def _automaton(literals: list[str]) -> Any:
    if not literals:
        return None
    import ahocorasick

    auto = ahocorasick.Automaton()
    for k, lit in enumerate(literals):
        auto.add_word(lit, k)
    auto.make_automaton()
    return auto
