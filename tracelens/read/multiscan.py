"""Candidate lines of a large log, found by a multi-pattern engine.

The large-log scanner (:mod:`tracelens.read.scan`) looks for one set of patterns: traceback
headers, error words, the failure table's literals and the fact extractors' triggers. Searched
as one RE2 alternation, the whole log goes through RE2 (about 800 MB/s a core). Hyperscan
(the ``hyperscan`` package, whose wheels bundle the library) searches the same set at several
times that speed; it only says where matches end, and the scanner then runs RE2 from the start
of each such line, so the hits, their kinds and line numbers are exactly those of the RE2 scan.

The engine is chosen when this module is first imported: Hyperscan when it imports, RE2
otherwise (no wheel for the platform), or RE2 when the environment sets
``TRACELENS_SCAN_ENGINE=re2``. :data:`ENGINE` is the choice; setting it to ``"re2"`` (tests
do) switches later scans of this process to the RE2 path. The scanner imports this module only
for a log large enough to be scanned, so a small log never pays for importing Hyperscan.

Every pattern must match within one line (no pattern can match ``\\n`` or ``\\r``): the
scanner starts RE2 at the start of the line where a match ends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tracelens.literals import cached_database, hyperscan_usable

Finder = Callable[[Any, int, int], "list[int] | None"]
"""``find(data, end, start)``: the sorted end offsets (in ``data``) of matches in
``data[start:end]``, or ``None`` when there are too many to be worth listing (the caller then
searches every byte with RE2)."""


def _choose() -> str:
    return "hyperscan" if hyperscan_usable() else "re2"


ENGINE: str = _choose()
"""``"hyperscan"`` or ``"re2"``."""

DENSE = 512
"""A chunk with more than one match per this many bytes (on average) is searched by RE2
instead: listing every match would then cost more than RE2's one search per line."""


def literal(pattern: bytes) -> bytes | None:
    """The bytes a regex matches when it is a plain literal (letters, digits, spaces and
    backslash-escaped punctuation), else ``None``.

    >>> literal(rb"Traceback \\(most recent call last\\)"), literal(rb"GPU \\d+:")
    (b'Traceback (most recent call last)', None)
    """
    out = bytearray()
    i = 0
    while i < len(pattern):
        c = pattern[i : i + 1]
        if c == b"\\":
            nxt = pattern[i + 1 : i + 2]
            if not nxt or nxt.isalnum():
                return None  # \d, \b, \n, ...
            out += nxt
            i += 2
            continue
        if c in b"[](){}*+?.^$|":
            return None
        out += c
        i += 1
    return bytes(out)


def minimal(patterns: Sequence[bytes]) -> list[bytes]:
    """The patterns that decide which lines hold a match: a literal that contains another
    literal of the set is dropped (a line holding ``ERROR: `` holds ``ERROR``); regexes stay."""
    lits = sorted({x for x in map(literal, patterns) if x is not None}, key=lambda x: (len(x), x))
    kept: list[bytes] = []
    for lit in lits:
        if not any(k in lit for k in kept):
            kept.append(lit)
    regexes = sorted({p for p in patterns if literal(p) is None})
    return [re.escape(k) for k in kept] + regexes


_FINDERS: dict[tuple[bytes, ...], Finder | None] = {}


def finder(patterns: Sequence[bytes]) -> Finder | None:
    """A function listing where matches of ``patterns`` end (built once per set and process),
    or ``None`` on the RE2 path."""
    if ENGINE != "hyperscan":
        return None
    key = tuple(patterns)
    if key not in _FINDERS:
        _FINDERS[key] = _hyperscan_finder(key)
    return _FINDERS[key]


def _hyperscan_finder(patterns: Sequence[bytes]) -> Finder:
    import hyperscan

    db = _database(patterns)
    terminated = hyperscan.ScanTerminated

    def find(data: Any, end: int, start: int = 0) -> list[int] | None:
        ends: list[int] = []
        append = ends.append
        limit = max(1024, (end - start) // DENSE)

        def on_match(_id: int, _from: int, to: int, _flags: int, _ctx: object) -> bool:
            append(start + to)
            return len(ends) > limit

        with memoryview(data) as view:
            try:
                db.scan(view[start:end], match_event_handler=on_match)
            except terminated:
                return None
        ends.sort()  # Hyperscan does not promise to report matches in order
        return ends

    return find


def _database(patterns: Sequence[bytes]) -> Any:
    """The compiled Hyperscan database of ``patterns``: from the cache file when it was built
    from this very set (compiling takes 30-100 ms, loading well under one), else compiled and
    cached."""
    import hyperscan

    def build() -> Any:
        exprs = minimal(patterns)
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=0)
        return db

    return cached_database("scan", b"\n".join(patterns) + b"\n\n", build)
