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
    if "[:" in pattern or "\\Q" in pattern:
        return None  # POSIX classes and quoting: RE2 reads them otherwise than Python
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre()[0].parse(pattern)
    except Exception:  # noqa: BLE001  (any pattern Python cannot read simply gets no literal)
        return None
    if parsed.state.flags & ~_PLAIN_FLAGS:
        return None
    runs: list[str] = []
    current: list[str] = []
    _collect(list(parsed), runs, current)
    runs.append("".join(current))
    best = max(runs, key=len)
    return best if len(best) >= _MIN_LENGTH else None


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
