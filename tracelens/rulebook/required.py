"""A literal that every match of a regex holds: a text without it cannot match, and a
substring test (``in``, which runs at memory speed) says so without running the regex.

Most of a rule's regexes find nothing in a given log (about 97 % of the line conditions run
over the corpus), so the regex engine ran mostly to say no. The literal is read from the
pattern as Python's own regex parser (``re._parser``) parses it, conservatively: only the
runs of plain characters of the pattern's top-level sequence and of the groups it must match;
any case-insensitive or verbose flag, alternation at the top, or a construct whose meaning
may differ between Python's syntax and RE2's (a POSIX class ``[[:alpha:]]``) gives no literal,
and the regex then runs as before.

>>> required_literal(r"NCCL WARN .*Connection closed by remote peer (?P<peer>\\S+)")
'Connection closed by remote peer '
>>> required_literal(r"(?i)out of memory") is None
True
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from typing import Any

from tracelens.pyregex import compile_re

_MIN_LENGTH = 3
"""Shorter literals occur in nearly every text: testing them saves nothing."""

_PLAIN_FLAGS = re.UNICODE | re.MULTILINE | re.DOTALL
"""Flags that change no literal's meaning."""


_asked: set[str] = set()
_known: dict[str, str | None] = {}


def learn(literals: dict[str, str | None]) -> None:
    """Take the literals of the rules' regexes as the rule index read them when it was built."""
    _known.update(literals)


def reused_literal(pattern: str) -> str | None:
    """The pattern's literal when the rule index holds it (:func:`learn`), else
    :func:`required_literal` from the second time a pattern is asked for on (None the first
    time): reading a pattern costs about what RE2 takes to search a crash log once, so a
    single ``diagnose`` skips it and a batch of logs (``ingest``, ``rules test``) gains."""
    if pattern in _known:
        return _known[pattern]
    if pattern not in _asked:
        _asked.add(pattern)
        return None
    return required_literal(pattern)


def settled_literal(pattern: str) -> tuple[str | None, bool]:
    """:func:`reused_literal`, and whether that answer is settled: read from the rule index or
    from the pattern, it is what every later call gives, so a condition may keep it instead of
    asking on every log."""
    if pattern in _known:
        return _known[pattern], True
    if pattern not in _asked:
        _asked.add(pattern)
        return None, False
    return required_literal(pattern), True


@lru_cache(maxsize=4096)
def required_literal(pattern: str) -> str | None:
    """The longest run of plain characters that every match of ``pattern`` (RE2 syntax)
    holds, or None when none is known (at least three characters long)."""
    items = _parsed(pattern)
    if items is None:
        return None
    best = _longest_run(items)
    return best if len(best) >= _MIN_LENGTH else None


def _parsed(pattern: str) -> list[tuple[Any, Any]] | None:
    """The top-level items of the pattern as Python's parser reads it, or ``None`` when its
    literals cannot be trusted: POSIX classes and quoting (RE2 reads them otherwise than
    Python), a flag that changes what a literal matches, a pattern Python cannot read."""
    if "[:" in pattern or "\\Q" in pattern:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre()[0].parse(pattern)
    except Exception:  # noqa: BLE001  (any pattern Python cannot read simply gets no literal)
        return None
    return None if parsed.state.flags & ~_PLAIN_FLAGS else list(parsed)


def _longest_run(items: list[tuple[Any, Any]]) -> str:
    """The longest run of literal characters a sequence must match whole."""
    runs: list[str] = []
    current: list[str] = []
    _collect(items, runs, current)
    runs.append("".join(current))
    return max(runs, key=len)


def _collect(items: list[tuple[Any, Any]], runs: list[str], current: list[str]) -> None:
    """Runs of literal characters of a sequence that must match whole, the groups it must
    match inlined (a group's characters continue the run around it)."""
    c = _sre()[1]
    for op, av in items:
        if op == c.LITERAL:
            current.append(chr(av))
        elif op == c.SUBPATTERN and not av[1] and not av[2]:
            _collect(list(av[3]), runs, current)
        else:
            runs.append("".join(current))
            current.clear()


@lru_cache(maxsize=1)
def _sre() -> tuple[Any, Any]:
    """Python's regex parser and its constants (``re._parser`` from Python 3.11 on)."""
    import importlib

    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:  # Python 3.10
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


def required_any(pattern: str) -> list[str] | None:
    """Literals one of which every match of ``pattern`` holds: its :func:`required_literal`,
    or for an alternation at the top (``A|B|C``) each branch's own, or those of a group the
    pattern must match that is an alternation; ``None`` when a branch has none.

    >>> required_any(r"(Reason|reason):\\s*OOMKilled|\\"OOMKilled\\":\\s*true|\\bOOMKilled\\b")
    ['OOMKilled', '"OOMKilled":']
    >>> required_any(r"Killed|\\d+") is None
    True
    >>> required_any(r"\\.(service|scope): (A process was killed|Failed with 'oom-kill')")
    ['A process was killed', "Failed with 'oom-kill'"]
    """
    lit = required_literal(pattern)
    if lit is not None:
        return [lit]
    items = _parsed(pattern)
    return None if items is None else _branch_literals(items)


def _branch_literals(items: list[tuple[Any, Any]]) -> list[str] | None:
    """For a sequence that is one alternation, each branch's longest literal run; else, of the
    groups the sequence must match that are one alternation each (``\\.(service|scope): (A|B)``),
    the one whose branches' literals are longest. ``None`` when no such set is known."""
    c = _sre()[1]
    if len(items) == 1 and items[0][0] == c.BRANCH:
        out: list[str] = []
        for branch in items[0][1][1]:
            best = _longest_run(list(branch))
            if len(best) < _MIN_LENGTH:
                return None
            out.append(best)
        return list(dict.fromkeys(out))
    found: list[list[str]] = []
    for op, av in items:
        if op == c.SUBPATTERN and not av[1] and not av[2]:
            inner = _branch_literals(list(av[3]))
            if inner is not None:
                found.append(inner)
    return max(found, key=lambda lits: min(map(len, lits)), default=None)


def rule_needs(rule: Any) -> list[str | list[str]]:
    """A rule's ``needs``: its own, or :func:`derived_needs` when it declares none."""
    return list(rule.needs) or list(derived_needs(rule.match))


_UNESCAPED = compile_re(r"[A-Za-z0-9 _.,:;=()\[\]{}<>/+*%#@!?&|^~$-]+")
"""Characters a repr, JSON or a logger leaves as they are (no quotes, backslashes, controls)."""


def derived_needs(match: Any) -> list[list[str]]:
    """``needs`` for a rule that declares none, read from its conditions: for each ``all``
    condition whose matches must hold a literal, the literals one of which they hold, and one
    group for the ``any`` conditions when every one of them has such literals (any of them
    will do). ``line`` conditions give literals (their regexes search the very text the
    prefilter reads), and ``exception`` conditions their message's when no escaping changes it
    (a message quoted in a repr is unescaped); exception types (which may be qualified), frames,
    facts and ``none`` give none. ``[]``: nothing is known and the rule runs on every log, as
    before."""
    groups = [g for c in match.all if (g := _cond_literals(c)) is not None]
    if match.any and (g := _any_literals(match.any)) is not None:
        groups.append(g)
    return [sorted(set(g)) for g in groups]


def _any_literals(conds: list[Any]) -> list[str] | None:
    """Literals one of which holds when any of the conditions does: every one's, or ``None``
    when one of them has none."""
    groups = [_cond_literals(c) for c in conds]
    if any(g is None for g in groups):
        return None
    return [lit for g in groups if g is not None for lit in g]


def _cond_literals(cond: Any) -> list[str] | None:
    """Literals one of which every match of the condition holds, or ``None``."""
    kind = getattr(cond, "kind", None)
    if kind == "exception":
        message = cond.exception.message
        found = required_any(message) if message else None
        # a message is read from the log as printed, but one quoted in a repr is unescaped:
        # only literals that no escaping changes are known to be in the log's text
        return found if found and all(_UNESCAPED.fullmatch(lit) for lit in found) else None
    if kind == "line":
        text = cond.line if isinstance(cond.line, str) else cond.line.text
        return required_any(text) if text else None
    if kind == "all":
        return next((g for c in cond.all if (g := _cond_literals(c)) is not None), None)
    if kind == "any":
        return _any_literals(cond.any)
    return None
