"""The scan of a large log for candidate lines, in parallel, started as early as it can be.

:mod:`tracelens.read.scan` decides what to look for (its :class:`ScanSet`: traceback headers,
error words, the failure table's literals, the fact extractors' triggers) and which windows to
parse; this module searches the bytes. A log of :data:`PARALLEL_MIN` bytes or more is searched
by one forked process per core (up to 4), each over one range of lines.

For ``tracelens diagnose FILE`` of such a log, the ``tracelens`` process starts those processes
before it imports anything else (:func:`start_early`, called first thing by
:mod:`tracelens.cli.entry`): the scan then runs while the command line is parsed and the rest of
tracelens is imported, instead of after. Building the pattern set needs the fact extractors
(most of the import time), so the early start uses the set the last large scan wrote down
(:func:`remember`, a small file in the cache folder, keyed by the sources that define it), and
:func:`take` hands the running scan over only if that set is the current one; otherwise the
early processes are stopped and the log is scanned again. This module imports nothing of
tracelens beyond :mod:`tracelens.paths`, :mod:`tracelens.read.formats` and
:mod:`tracelens.read.multiscan`.
"""

from __future__ import annotations

import os
import stat
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import re2

from tracelens.read import formats

CHUNK = 8 << 20
"""Bytes read and searched at a time."""
PARALLEL_MIN = 64 << 20
"""Logs at least this large are scanned by several processes at once (one per core, up to 4)."""

Hit = tuple[int, int, int]  # (offset of the line, line number, kind)
Found = tuple[list[Hit], list[Hit], int]  # the first hits, the last hits, line ends in the range


def _line_counter() -> tuple[Callable[..., int], bool]:
    """``count(data, sep, start, end)``: how often the one byte ``sep`` occurs in
    ``data[start:end]`` (a bytes-like object or a mapped file); and whether it is StringZilla's
    SIMD count, where its wheel imports (about 8x ``bytes.count`` here: the line count was a
    third of a large log's scan), else ``bytes.count``."""
    try:
        from stringzilla import count
    except ImportError:
        return lambda data, sep, start, end: data.count(sep, start, end), False

    def count_lines(data, sep: bytes, start: int, end: int) -> int:
        with memoryview(data) as view:
            return count(view, sep, start, end)

    return count_lines, True


count_lines, FAST_COUNT = _line_counter()

_OPTS = re2.Options()
_OPTS.log_errors = False
_TABLES = (b"NVIDIA-SMI", b"PyTorch version", b"Root Cause", b"Collecting environment")
"""Facts printed as tables (kind 4: a wider window after the line)."""


class ScanSet:
    """The patterns of one scan, by kind of hit (1: traceback header, 2: error line, 3: fact
    line): every pattern matches within one line (:mod:`tracelens.read.multiscan` relies on
    it). The RE2 regexes are compiled on first use (a small log is never scanned)."""

    __slots__ = ("groups", "patterns", "_triggers", "_tb_only")

    def __init__(self, tb: Sequence[bytes], err: Sequence[bytes], fact: Sequence[bytes]):
        self.groups = (tuple(tb), tuple(err), tuple(fact))
        self.patterns: tuple[bytes, ...] = self.groups[0] + self.groups[1] + self.groups[2]
        self._triggers = self._tb_only = None

    @property
    def triggers(self):
        """One RE2 regex for the whole set; the kind of a match is its group's number."""
        if self._triggers is None:
            tb, err, fact = (b"|".join(g) for g in self.groups)
            self._triggers = re2.compile(b"(" + tb + b")|(" + err + b")|(" + fact + b")", _OPTS)
        return self._triggers

    @property
    def tb_only(self):
        """The traceback headers alone."""
        if self._tb_only is None:
            self._tb_only = re2.compile(b"|".join(self.groups[0]), _OPTS)
        return self._tb_only


def scan_range(ss: ScanSet, read_at, start: int, stop: int, nl: bytes = b"\n") -> Found:
    """Trigger hits in bytes [start, stop) (a line start to a line end), with line numbers
    counted from 1 at ``start``; and the number of line ends (``nl``) in the range.

    ``read_at(offset, n)`` gives ``(chunk, skip)``: the bytes from ``offset`` are ``chunk[skip:]``
    (a file mapped from the page boundary below ``offset`` starts ``skip`` bytes early). Each
    chunk is read from a line start and searched up to its last line end (RE2 with pos/endpos,
    no copies); the next read starts right after, so no line is ever split. With Hyperscan, the
    chunk's match ends are listed first and RE2 starts at the line of the next one, so RE2
    reads only the lines that hold a match."""
    from tracelens.read.multiscan import finder

    find = finder(ss.patterns)
    triggers, tb_only = ss.triggers, ss.tb_only
    first_hits: list[Hit] = []
    last_hits: deque[Hit] = deque(maxlen=20000)
    base_off = start
    line = 1
    while base_off < stop:
        chunk, skip = read_at(base_off, min(CHUNK, stop - base_off))
        end = len(chunk)
        if end <= skip:
            break
        if end - skip == CHUNK and base_off + end - skip < stop:
            cut = chunk.rfind(nl, skip) + 1
            end = cut or end  # a line longer than a chunk is searched in pieces
        ends = find(chunk, end, skip) if find is not None else None
        next_end = 0  # index in ``ends`` of the first match ending after ``pos``
        counted = lstart = pos = skip  # ``lstart``: start of the line holding ``pos``
        while pos < end:
            at = pos
            if ends is not None:
                next_end = bisect_right(ends, pos, next_end)
                if next_end == len(ends):
                    break
                # no match starts before the line of the first one that ends after ``pos``
                at = max(pos, chunk.rfind(nl, pos, ends[next_end] - 1) + 1)
            m = triggers.search(chunk, at, end)
            if m is None:
                break
            # the line start, looking back no further than where this search began
            prev = chunk.rfind(nl, pos, m.start())
            if prev >= 0:
                lstart = prev + 1
            line += count_lines(chunk, nl, counted, lstart)
            counted = lstart
            kind = m.lastindex or 2
            if kind == 3 and any(t in chunk[lstart : lstart + 200] for t in _TABLES):
                kind = 4
            hit = (base_off + lstart - skip, line, kind)
            if len(first_hits) < 2000:
                first_hits.append(hit)
            else:
                last_hits.append(hit)
            # one hit per line (a traceback header later on the line is a second one, with its
            # wider context): a line holding a million triggers is still searched once
            eol = chunk.find(nl, m.end(), end)
            eol = end if eol < 0 else eol
            tb = tb_only.search(chunk, m.end(), eol) if kind != 1 else None
            pos = tb.start() if tb is not None else eol
        line += count_lines(chunk, nl, counted, end)
        base_off += end - skip
    return first_hits, list(last_hits), line - 1


def pread_scan(ss: ScanSet, fd: int, start: int, stop: int, nl: bytes) -> Found:
    """:func:`scan_range` over a file descriptor: each chunk mapped (no copy; where
    StringZilla counts lines, which reads a mapping as it is), else read with ``pread`` (no
    shared offset)."""
    if FAST_COUNT:
        try:
            return scan_range(ss, mapped_reader(fd), start, stop, nl)
        except (OSError, ValueError):  # a file that cannot be mapped: read it
            pass

    def readinto(view: memoryview, off: int) -> int:
        if hasattr(os, "preadv"):
            return os.preadv(fd, [view], off)
        data = os.pread(fd, len(view), off)
        view[: len(data)] = data
        return len(data)

    return scan_range(ss, chunk_reader(readinto), start, stop, nl)


def mapped_reader(fd: int) -> Callable[[int, int], tuple[Any, int]]:
    """``read_at(offset, n)`` mapping the file from the page boundary at or below ``offset``
    (the mapping a chunk's ``skip`` bytes early): the page cache read where it lies, where
    ``pread`` copied every chunk (a third of a scanning process's time). One chunk is mapped at
    a time: the one before is unmapped when nothing refers to it, so memory stays flat."""
    import mmap

    size = os.fstat(fd).st_size
    grain = mmap.ALLOCATIONGRANULARITY

    def read_at(off: int, n: int) -> tuple[Any, int]:
        n = min(n, size - off)
        if n <= 0:
            return b"", 0
        base = off - off % grain
        return mmap.mmap(fd, off - base + n, prot=mmap.PROT_READ, offset=base), off - base

    return read_at


def chunk_reader(readinto) -> Callable[[int, int], tuple[bytearray, int]]:
    """``read_at(offset, n)`` reading each chunk into the same buffer: one chunk in memory at
    a time (with a new ``bytes`` each time, the last chunk lives on while the next is read)."""
    buf = bytearray()

    def read_at(off: int, n: int) -> tuple[bytearray, int]:
        nonlocal buf
        if len(buf) < n:
            buf = bytearray(n)
        del buf[n:]
        with memoryview(buf) as view:
            got = readinto(view, off)
        del buf[got:]
        return buf, 0

    return read_at


def line_end_of(fp: BinaryIO) -> bytes:
    """The line separator of a file: ``\\r`` when its first MiB holds a bare ``\\r`` and no
    ``\\n`` (classic Mac OS line ends), else ``\\n``."""
    where = fp.tell()
    fp.seek(0)
    head = fp.read(1 << 20)
    fp.seek(where)
    return b"\r" if b"\r" in head and b"\n" not in head else b"\n"


def _split(fp: BinaryIO, total: int, parts: int, nl: bytes) -> list[int]:
    """Cut points at line starts dividing [0, total) into about equal parts."""
    cuts = [0]
    for k in range(1, parts):
        fp.seek(total * k // parts)
        probe = fp.read(1 << 20)
        at = probe.find(nl)
        cut = total * k // parts + at + 1 if at >= 0 else total
        if cuts[-1] < cut < total:
            cuts.append(cut)
    return cuts + [total]


def _parallel_ok(fp: BinaryIO, total: int) -> int:
    """How many processes to scan with (1: scan here)."""
    import threading

    cores = min(os.cpu_count() or 1, 4)
    if total < PARALLEL_MIN or cores < 2 or threading.active_count() > 1 or not hasattr(os, "fork"):
        return 1
    try:
        fp.fileno()
    except (OSError, ValueError, AttributeError):
        return 1
    return cores


class Prefetch:
    """A scan of a large file already running in forked child processes. Each child scans one
    range and sends its hits back through a pipe."""

    def __init__(self, fp: BinaryIO, total: int, workers: int, ss: ScanSet):
        from tracelens.read.multiscan import finder

        self.total, self.scanset = total, ss
        self.nl = line_end_of(fp)
        finder(ss.patterns)  # built once here, inherited by every child, as are the regexes
        _ = ss.triggers, ss.tb_only
        cuts = _split(fp, total, workers, self.nl)
        fd = fp.fileno()
        self.children: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        for a, b in zip(cuts, cuts[1:]):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: scan, send, leave without running any cleanup
                os.close(r)
                try:
                    import pickle

                    data = pickle.dumps(
                        pread_scan(ss, fd, a, b, self.nl), protocol=pickle.HIGHEST_PROTOCOL
                    )
                    with os.fdopen(w, "wb") as out:
                        out.write(data)
                finally:
                    os._exit(0)
            os.close(w)
            self.children.append((pid, r))

    def result(self) -> list[Found]:
        import pickle

        parts = []
        try:
            for _pid, r in self.children:
                with os.fdopen(r, "rb", closefd=False) as src:
                    data = src.read()
                if not data:
                    raise OSError("a scanning process ended without a result")
                parts.append(pickle.loads(data))
            return parts
        finally:
            self.close()

    def close(self, stop: bool = False) -> None:
        """Reap the children (``stop``: end them first, their result is not wanted)."""
        for pid, r in self.children:
            if stop:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            try:
                os.close(r)
            except OSError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.children = []


def prescan_start(fp: BinaryIO, ss: ScanSet) -> Prefetch | None:
    """Start scanning a large file in parallel; ``None`` when it is small or cannot be."""
    try:
        fp.seek(0, os.SEEK_END)
        total = fp.tell()
        fp.seek(0)
    except (OSError, ValueError):
        return None
    workers = _parallel_ok(fp, total)
    if workers < 2:
        return None
    remember(ss)
    return Prefetch(fp, total, workers, ss)


# --- the early start -------------------------------------------------------------------------

_VALUED = frozenset({"--format", "--rules", "--fail-on", "--db", "--redact-regex"})
"""The options of ``diagnose`` that take a value (a test compares them with the command's)."""

_early: tuple[str, tuple[BinaryIO, int, str], Prefetch] | None = None


def diagnosed_path(args: Sequence[str]) -> str | None:
    """The log a ``diagnose`` command line (the words after ``diagnose``) names, or None when
    it is not plain to read without the command's parser.

    >>> diagnosed_path(["--format", "json", "big.log", "--full"])
    'big.log'
    >>> diagnosed_path(["-x", "big.log"]) is None, diagnosed_path(["a.log", "b.log"]) is None
    (True, True)
    """
    found: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            found += args[i + 1 :]
            break
        if arg.startswith("--"):
            i += arg in _VALUED  # its value is the next word; a flag or --opt=value stands alone
        elif arg.startswith("-") and arg != "-":
            return None  # a short option: leave it to the parser
        else:
            found.append(arg)
        i += 1
    return found[0] if len(found) == 1 else None


def start_early(args: Sequence[str]) -> None:
    """Start scanning the log of ``diagnose ARGS`` now when it is a regular file large enough
    to be scanned in parallel and the last pattern set is known; never raises."""
    global _early
    try:
        path = diagnosed_path(args)
        if path is None or path == "-":
            return
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size < PARALLEL_MIN:
            return
        groups = _recall()
        if groups is None:
            return
        fp = open(path, "rb")  # noqa: SIM115  (handed over by take(), closed by its reader)
        try:
            head = fp.read(formats.HEAD)
            if formats.compression(head) or formats.not_a_log(head):  # read by open_input
                fp.close()
                return
            fp.seek(0)
            total = os.fstat(fp.fileno()).st_size
            workers = _parallel_ok(fp, total)
            if workers < 2:
                fp.close()
                return
            _early = (path, (fp, total, path), Prefetch(fp, total, workers, ScanSet(*groups)))
        except BaseException:
            fp.close()
            raise
    except Exception:  # noqa: BLE001  (the normal path reads the log and reports any problem)
        _early = None


def take(path: str, ss: ScanSet) -> tuple[tuple[BinaryIO, int, str], Prefetch] | None:
    """The file and scan :func:`start_early` started for ``path`` with the set ``ss``, or
    None (any other early scan is stopped)."""
    global _early
    if _early is not None and _early[0] == path and _early[2].scanset.groups == ss.groups:
        early, _early = _early, None
        return early[1], early[2]
    discard()
    return None


def discard() -> None:
    """Stop an early scan nobody took (the command failed before reading its log)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early[2].close(stop=True)
        early[1][0].close()


# --- the pattern set of the last large scan ----------------------------------------------------


def _sources_key() -> str:
    """Names the sources the pattern set is built from (the reader and the fact extractors):
    their sizes and modification times."""
    import zlib

    here = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for folder in (here, os.path.join(os.path.dirname(here), "facts")):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{zlib.crc32(' '.join(parts).encode()):08x}"


def _set_file() -> str:
    from tracelens.paths import cache_home

    return os.path.join(str(cache_home()), "tracelens", f"scanset-{_sources_key()}.bin")


def remember(ss: ScanSet) -> None:
    """Write the set down for the next early start (once; a read-only cache is skipped): one
    pattern a line, the three kinds apart by an empty line."""
    if any(not g for g in ss.groups) or any(b"\n" in p or not p for p in ss.patterns):
        return  # not representable so; the early start is only a head start
    try:
        path = _set_file()
        if os.path.exists(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as out:
            out.write(b"\n\n".join(b"\n".join(g) for g in ss.groups))
        os.replace(tmp, path)
    except OSError:
        pass


def _recall() -> tuple[tuple[bytes, ...], ...] | None:
    try:
        with open(_set_file(), "rb") as src:
            groups = tuple(tuple(g.split(b"\n")) for g in src.read().split(b"\n\n"))
    except OSError:
        return None
    return groups if len(groups) == 3 else None
