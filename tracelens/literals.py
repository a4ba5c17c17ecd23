"""Which of many literals occur in a text, and where, for a process that reads many texts.

The rules' prefilter and the fact triggers look for sets of literals (about 2,400 and 64).
Their Aho-Corasick automatons (pyahocorasick) cost nothing to build but walk a text one
character at a time in Python's string form (about 40 MB/s); an RE2 set of the prefilter's
literals scans faster once warm, but builds its DFA anew in each process from the texts it
reads (0.25 ms a text over the first few hundred). Hyperscan's literal mode scans the UTF-8
bytes at several hundred MB/s from the first text on: 0.016 ms for a 5.5 KB log.

A database is compiled once per set of literals (5-60 ms) and kept in the cache folder, from
which a later process loads it in well under a millisecond (:func:`cached_database`, also the
large-log scanner's). Hyperscan is used only where it imports (its wheels bundle the library;
none for Linux on Arm) and unless ``TRACELENS_SCAN_ENGINE=re2``; the functions below then
return ``None`` and the caller keeps its own engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

Present = Callable[[bytes], "set[int]"]
"""``present(data)``: the indices of the literals that occur in ``data``."""
Occurrences = Callable[[bytes], "list[tuple[int, int]]"]
"""``occurrences(data)``: ``(end, index)`` of every occurrence of a literal in ``data``
(``end``: the byte offset just past it), in no particular order."""


def hyperscan_usable() -> bool:
    """Whether Hyperscan imports here and the environment does not ask for RE2."""
    if os.environ.get("TRACELENS_SCAN_ENGINE", "").lower() == "re2":
        return False
    try:
        import hyperscan  # noqa: F401
    except ImportError:  # no wheel for this platform, or a library it cannot load
        return False
    return True


_FINDERS: dict[tuple[tuple[str, ...], bool, bool], Any] = {}


def present_finder(literals: Sequence[str]) -> Present | None:
    """A function saying which of ``literals`` occur in UTF-8 bytes (each reported once per
    scan), or ``None`` where Hyperscan is not used or cannot take the set."""
    scan = _finder(tuple(literals), once=True)
    if scan is None:
        return None

    def present(data: bytes) -> set[int]:
        out: set[int] = set()
        add = out.add

        def on_match(k: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
            add(k)

        scan(data, match_event_handler=on_match)
        return out

    return present


def occurrence_finder(literals: Sequence[str]) -> Occurrences | None:
    """A function listing every occurrence of ``literals`` in UTF-8 bytes as ``(end,
    index)``, or ``None`` where Hyperscan is not used or cannot take the set."""
    scan = _finder(tuple(literals), once=False)
    if scan is None:
        return None

    def occurrences(data: bytes) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        append = out.append

        def on_match(k: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            append((to, k))

        scan(data, match_event_handler=on_match)
        return out

    return occurrences


def _finder(literals: tuple[str, ...], once: bool) -> Any:
    """The bound ``scan`` of the set's database (built once per process), or ``None``."""
    usable = hyperscan_usable()
    key = (literals, once, usable)
    if key not in _FINDERS:
        _FINDERS[key] = _build(literals, once) if usable else None
    return _FINDERS[key]


def _build(literals: tuple[str, ...], once: bool) -> Any:
    import hyperscan

    if not literals or not all(literals):
        return None  # Hyperscan refuses an empty literal
    encoded = [lit.encode("utf-8", "surrogatepass") for lit in literals]
    flag = hyperscan.HS_FLAG_SINGLEMATCH if once else 0

    def build() -> Any:
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        db.compile(
            expressions=encoded,
            ids=list(range(len(encoded))),
            elements=len(encoded),
            flags=[flag] * len(encoded),
            literal=True,
        )
        return db

    header = repr((encoded, once)).encode() + b"\n\n"
    try:
        return cached_database("literals", header, build).scan
    except hyperscan.error:
        return None


def cached_database(kind: str, header: bytes, build: Callable[[], Any]) -> Any:
    """A Hyperscan database from the cache file of ``kind`` whose first bytes are ``header``
    (what it was built from), else ``build()`` then written there for the next process. A
    file built for another CPU or another Hyperscan, or unreadable, is built again; a cache
    folder that cannot be written only means building it again next time."""
    import zlib

    import hyperscan

    from tracelens.paths import cache_home

    version = getattr(hyperscan, "__version__", "")
    name = f"{kind}-{zlib.crc32(header):08x}-hyperscan-{version}.hsdb"
    path = cache_home() / "tracelens" / name
    try:
        blob = path.read_bytes()
        if blob.startswith(header):
            db = hyperscan.loadb(blob[len(header) :], hyperscan.HS_MODE_BLOCK)
            db.scratch = hyperscan.Scratch(db)  # fails for a database built for another CPU
            return db
    except (OSError, hyperscan.error):
        pass
    db = build()
    tmp = path.with_name(f"{name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(header + hyperscan.dumpb(db))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
    return db
