"""The nearest known failure: an unrecognized failure matched against the originating
failures of every rule's example logs.

The index holds, for each example log, its rule, its category and the originating failure's
text (exception type and normalized message, or the failure line) with the package that raised
it. It is built on first need (an unrecognized failure: a rare path) and cached beside the
rule cache, keyed by the example files' paths, sizes and times.

A query scores each entry with rapidfuzz's ``ratio`` (normalized edit distance) over the texts, plus
a few points when the same package raised it; the best entry per rule counts. The category of
the nearest rule is taken only at or above :data:`THRESHOLD` (tuned on held-out logs, see
docs/unrecognized.md).
"""

from __future__ import annotations

import heapq
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tracelens.parse.normalize import normalize
from tracelens.rulebook.load import read_cache, write_cache

if TYPE_CHECKING:  # the words table is imported when it is first needed
    from tracelens.rulebook.words import Answer

THRESHOLD = 85.0
"""Lowest score at which an unrecognized failure takes the nearest rule's category (below it,
the guess and then the words of known failures, ``tracelens.rulebook.words``)."""
_SAME_PACKAGE = 6.0
_MIN_MESSAGE = 12
"""Characters of message (besides the type) a failure needs before it can resemble another."""


@dataclass(frozen=True)
class Entry:
    rule_id: str
    category: str
    text: str
    """Normalized ``Type: message`` (or failure line) of the example's originating failure."""
    package: str
    """Top-level package of the raising frame (``vllm``, ``torch`` ...), or ``""``."""
    type: str = ""
    """The exception type, or ``""`` for a failure line."""
    file: str = ""
    """The file of the raising frame as printed, or ``""``."""


@dataclass(frozen=True)
class Near:
    rule_id: str
    category: str
    score: float


def key_text(origin) -> str:
    message = origin.message if origin.type else origin.text
    head = f"{origin.type}: " if origin.type else ""
    return normalize(head + " ".join(message.split())[:400])


def package_of(origin) -> str:
    frame = origin.frame
    if frame is None or not frame.module:
        return ""
    return frame.module.split(".", 1)[0]


def _examples(ruleset) -> list[tuple[str, os.stat_result, int]]:
    """(path, stamp, the rule's position) of each example log indexed: not a symptom rule's,
    whose example logs start with another failure (the one the symptom follows), which its
    category does not name. (One ``os.stat`` of each path as a string: a process that meets
    an unrecognized failure stamps some 3,000 files.)"""
    out = []
    stat = os.stat
    for k, paths in ruleset.cause_examples():
        for path in paths:
            try:
                out.append((path, stat(path), k))
            except OSError:
                continue
    return out


def _cache_file(files) -> Path | None:
    from tracelens import __version__
    from tracelens.paths import cache_home
    from tracelens.rulebook import origin as origin_mod

    base = str(cache_home())
    if base.startswith("~"):
        return None
    code = f"{os.stat(__file__).st_mtime_ns}:{os.stat(origin_mod.__file__).st_mtime_ns}"
    text = "\0".join(
        [__version__, code, *[f"{p}:{st.st_size}:{st.st_mtime_ns}" for p, st, _ in files]]
    ).encode()
    return (
        Path(base) / "tracelens" / f"nearest-{zlib.crc32(text):08x}{zlib.adler32(text):08x}.pickle"
    )


def build(ruleset) -> list[Entry]:
    """Parse every example log and index its originating failure."""
    from tracelens.parse.document import build as build_document
    from tracelens.read import scan
    from tracelens.rulebook.origin import Wrappers, find_origin

    wrappers = Wrappers(ruleset.wrappers)
    out: list[Entry] = []
    for path, _st, k in _examples(ruleset):
        try:
            raw = Path(path).read_bytes()
        except OSError:
            continue
        records, lines, full, encoding = scan.read_bytes(raw)
        doc = build_document(
            records,
            source=path,
            size=len(raw),
            line_count=lines,
            full_parse=full,
            encoding=encoding,
        )
        origin, _recovered = find_origin(doc, wrappers)
        if origin is None:
            continue
        out.append(entry_of(ruleset.rules[k], origin))
    return out


def entry_of(lr, origin) -> Entry:
    """The index entry of a rule's example whose originating failure is ``origin``."""
    file = origin.frame.file if origin.frame is not None else ""
    return Entry(lr.id, lr.rule.category, key_text(origin), package_of(origin), origin.type, file)


def index(ruleset) -> list[Entry]:
    """The index for these rules, from the cache when the example files are unchanged."""
    cached = getattr(ruleset, "_nearest", None)
    if cached is not None:
        return cached
    from tracelens.rulebook.words import Words

    files = _examples(ruleset)
    path = _cache_file(files)
    held = read_cache(path) if path is not None else None
    if isinstance(held, tuple) and len(held) == 2 and isinstance(held[1], Words):
        entries, table = held
    else:
        entries = build(ruleset)
        table = Words.build(entries)  # cached with the index: building it takes ~50 ms
        if path is not None:
            write_cache(path, (entries, table))
    ruleset._nearest, ruleset._words = entries, table
    return entries


def by_words(origin, entries: list[Entry], table=None) -> Answer | None:
    """The category the words of the known failures (``entries``, or their ``table`` built
    before) give ``origin``, with its probability and how many of its features the table
    knows; None when none of its words is known."""
    from tracelens.rulebook.words import Words

    if table is None:
        table = Words.build(entries)
    file = origin.frame.file if origin.frame is not None else ""
    return table.category(key_text(origin), origin.type, package_of(origin), file)


def words_table(ruleset):
    """The words table of the rules' index (built and cached with it)."""
    index(ruleset)
    return ruleset._words


def nearest(origin, entries: list[Entry], limit: int = 3) -> list[Near]:
    """The closest rules to an originating failure, best first (one entry per rule).

    rapidfuzz scores the query against every entry's text in one call (``process.extract``,
    best first), and once more against the entries of the query's package (they score
    :data:`_SAME_PACKAGE` more); the two lists are walked together, best first, so a rule
    is met first at its best score, and the walk stops below the ``limit``-th rule's score:
    the same rules and scores as scoring each entry in turn."""
    from rapidfuzz import fuzz, process

    query = key_text(origin)
    if len(query.split(":", 1)[-1].strip()) < _MIN_MESSAGE:
        return []  # a bare "AssertionError" resembles every other bare assertion
    pkg = package_of(origin)
    texts = [e.text for e in entries]
    scored = process.extract(query, texts, scorer=fuzz.ratio, processor=None, limit=None)
    runs: list[Iterator[tuple[float, int]]] = [((score, k) for _t, score, k in scored)]
    if pkg:
        same = [k for k, e in enumerate(entries) if e.package == pkg]
        bonus = process.extract(
            query, [texts[k] for k in same], scorer=fuzz.ratio, processor=None, limit=None
        )
        runs.append((score + _SAME_PACKAGE, same[j]) for _t, score, j in bonus)
    best: dict[str, tuple[float, str]] = {}
    cutoff: float | None = None
    for score, k in heapq.merge(*runs, key=lambda run: -run[0]):
        shown = round(min(score, 100.0), 1)
        if cutoff is not None and shown < cutoff:
            break  # every rule still to come scores less than the limit-th
        e = entries[k]
        if e.rule_id in best:
            continue  # met before at its best score
        best[e.rule_id] = (shown, e.category)
        if len(best) == limit:
            cutoff = shown
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [Near(rid, cat, shown) for rid, (shown, cat) in ranked]
