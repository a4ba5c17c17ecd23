"""Find where the trouble is in a large log without decoding all of it.

A small log (up to :data:`FULL_PARSE_LIMIT`) is parsed whole. A larger one is read once in
chunks; a multi-pattern engine (:mod:`tracelens.read.multiscan`: Hyperscan, or RE2 where it
has no wheel) finds the lines holding a traceback header, an error word or a fact trigger, one
RE2 search classifies each such line, and only windows of bytes around them are decoded and
parsed. Memory stays flat in the log's size. The search itself (in parallel for a large file,
started before the command line is parsed) is :mod:`tracelens.read.prescan`.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from typing import BinaryIO, cast

import re2

from tracelens.facts import SCAN_PATTERNS as FACT_PATTERNS
from tracelens.read import formats, prescan
from tracelens.read.failures import TRIGGERS
from tracelens.read.prescan import (
    Hit,
    Prefetch,
    ScanSet,
    chunk_reader,
    line_end_of,
    prescan_start,
    scan_range,
)
from tracelens.read.windows import Window, windows_around

# Kept light on purpose (no pydantic, no logread; the failure table is RE2 and dataclasses): the
# CLI opens the log and starts scanning it before it imports the rest of tracelens.
if False:  # typing only
    from tracelens.models import Record

FULL_PARSE_LIMIT = 8 << 20


class InputError(Exception):
    """The input cannot be read (missing, a directory, unreadable). One-line message."""


# The one pattern set of the scan, by kind of hit (1: traceback header, 2: error line, 3: fact
# line). Every pattern matches within one line (tracelens.read.multiscan relies on it).
_TB_PATTERNS = (
    rb"Traceback \(most recent call last\)",
    rb"Fatal Python error",
    rb"Exception Group Traceback",
)
_ERR_PATTERNS = (
    *b"ERROR|CRITICAL|FATAL|Error|Exception|error:|Killed|Bus error|Segmentation fault|"
    b"core dumped|NCCL WARN|CUDA error|out of memory|Aborted|terminate called|exitcode|"
    b"SIGKILL|SIGSEGV|SIGABRT|died unexpectedly".split(b"|"),
    rb"[EF]\d{4} \d\d:\d\d",
    *(re2.escape(t) for t in TRIGGERS),  # the failure lines' own literals
)
SCANSET = ScanSet(_TB_PATTERNS, _ERR_PATTERNS, FACT_PATTERNS)  # FACT: the extractors' triggers
PATTERNS = SCANSET.patterns

STREAM_LIMIT = 1 << 30
"""Most bytes read from an input of unknown length (stdin, a pipe, a FIFO, a device): an
endless one (``/dev/zero``, ``yes |``) is read this far, analyzed, and a line on stderr says
the rest was not read."""
FIFO_WAIT = 10.0
"""Seconds to wait for the first bytes from a named FIFO before saying nobody writes to it."""


def open_input(path: str) -> tuple[BinaryIO, int, str]:
    """Open a path or ``-``. A regular file is read where it lies; anything else (stdin, a
    pipe such as ``<(cmd)``, a FIFO, a device) is read once as a stream, up to
    :data:`STREAM_LIMIT` bytes, into a spool that can be read twice. A compressed log (gzip,
    bzip2, xz, zstd) is read through its decompressor into a spool; a file whose first bytes
    say it is no log (an image, an archive, an executable) is refused. Raises InputError."""
    fp, size, name = _open_raw(path)
    try:
        head = fp.read(formats.HEAD)
        fp.seek(0)
        kind = formats.compression(head)
        if kind is not None:
            fp, size = _decompressed(kind, fp, name)
            head = fp.read(formats.HEAD)
            fp.seek(0)
        what = formats.not_a_log(head)
        if what is not None:
            raise InputError(f"{name}: not a log: {what}")
    except OSError as exc:
        fp.close()
        raise InputError(f"{name}: read failed ({exc.strerror or exc})") from None
    except BaseException:
        fp.close()
        raise
    return fp, size, name


def _decompressed(kind: str, src: BinaryIO, name: str) -> tuple[BinaryIO, int]:
    """A compressed input decompressed into a spool (memory, then a temporary file), up to
    :data:`STREAM_LIMIT` bytes; ``src`` is closed."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=FULL_PARSE_LIMIT)
    try:
        with src:
            size, notice = formats.decompress(kind, src, spool.write, STREAM_LIMIT)
    except formats.Unreadable as exc:
        spool.close()
        raise InputError(f"{name}: {exc}") from None
    except BaseException:
        spool.close()
        raise
    if notice:
        _notice(f"{name}: {notice}")
    spool.seek(0)
    return cast(BinaryIO, spool), size


def _open_raw(path: str) -> tuple[BinaryIO, int, str]:
    if path == "-":
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
        return _spool(cast(BinaryIO, stdin), "<stdin>")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a log file")
    try:
        # non-blocking, so that opening a FIFO nobody writes to does not wait forever
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            _set_blocking(fd)
            return os.fdopen(fd, "rb"), st.st_size, path
        if os.isatty(fd):
            raise InputError(f"{path}: is a terminal, not a log file")
        if stat.S_ISFIFO(st.st_mode) and not _anonymous_pipe(st) and not _readable(fd, FIFO_WAIT):
            raise InputError(
                f"{path}: a FIFO that nobody writes to (nothing came in {FIFO_WAIT:g} s)"
            )
        _set_blocking(fd)
        src = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with src:
        return _spool(src, path)


def _set_blocking(fd: int) -> None:
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)


def _anonymous_pipe(st: os.stat_result) -> bool:
    """A pipe made by pipe(2) (``<(cmd)``, ``/dev/stdin`` in a pipeline): its writer already
    exists, so it is read like stdin. A named FIFO lives on another file system than pipes."""
    r, w = os.pipe()
    try:
        return os.fstat(r).st_dev == st.st_dev
    finally:
        os.close(r)
        os.close(w)


def _readable(fd: int, timeout: float) -> bool:
    """Whether bytes (or the end of the stream) arrive on ``fd`` within ``timeout`` seconds."""
    import select

    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return True  # cannot wait on it here: read it and see
    return bool(ready)


def _spool(src: BinaryIO, name: str) -> tuple[BinaryIO, int, str]:
    """Copy a stream into a spool (memory, then a temporary file), up to STREAM_LIMIT bytes."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=FULL_PARSE_LIMIT)
    size = 0
    try:
        while size < STREAM_LIMIT:
            chunk = src.read(min(prescan.CHUNK, STREAM_LIMIT - size))
            if not chunk:
                break
            if isinstance(chunk, str):
                chunk = chunk.encode()
            spool.write(chunk)
            size += len(chunk)
        else:
            _notice(
                f"{name}: read the first {STREAM_LIMIT >> 20} MiB only, the cap for an input "
                "of unknown length (a device or an endless pipe); the rest is not analyzed"
            )
    except OSError as exc:
        spool.close()
        raise InputError(f"{name}: read failed ({exc.strerror or exc})") from None
    spool.seek(0)
    return cast(BinaryIO, spool), size, name


def _notice(message: str) -> None:
    """One line on stderr about the input (never raises: stderr may be closed)."""
    try:
        print(f"tracelens: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def read_records(
    fp: BinaryIO, size: int, prefetch: Prefetch | None = None
) -> tuple[list[Record], int, bool, str]:
    """Records of the whole log, or of the windows around trouble for a large one.

    Returns (records, line count, whether the whole log was parsed, encoding).
    """
    from tracelens.read.logread import (
        decode,
        line_count,
        records_from_bytes,
        records_from_text,
        sniff_encoding,
    )

    head = fp.read(4)
    encoding, bom = sniff_encoding(head)
    fp.seek(0)
    if size <= FULL_PARSE_LIMIT or encoding != "utf-8":
        data = fp.read()
        text = decode(data[bom:], encoding)
        return records_from_text(text, 1), line_count(text), True, encoding
    nl = prefetch.nl if prefetch is not None else line_end_of(fp)
    windows, lines = find_windows(fp, prefetch)
    records = []
    for w in windows:
        fp.seek(w.start)
        data = fp.read(w.end - w.start)
        first_line = w.anchor_line - data.count(nl, 0, w.anchor - w.start)
        records.extend(records_from_bytes(data, first_line, nl.decode()))
    return records, lines, False, encoding


def start_scan(fp: BinaryIO) -> Prefetch | None:
    """Start scanning a large file in parallel; ``None`` when it is small or cannot be."""
    return prescan_start(fp, SCANSET)


def find_windows(fp: BinaryIO, prefetch: Prefetch | None = None) -> tuple[list[Window], int]:
    """One pass over the bytes: the windows to parse and the log's line count."""
    fp.seek(0, os.SEEK_END)
    total = fp.tell()
    if prefetch is None:
        prefetch = start_scan(fp)
    nl = prefetch.nl if prefetch is not None else line_end_of(fp)
    if prefetch is not None:
        parts = prefetch.result()
    else:

        def readinto(view: memoryview, off: int) -> int:
            fp.seek(off)
            if hasattr(fp, "readinto"):  # not SpooledTemporaryFile before Python 3.11
                return fp.readinto(view) or 0
            data = fp.read(len(view))
            view[: len(data)] = data
            return len(data)

        parts = [scan_range(SCANSET, chunk_reader(readinto), 0, total, nl)]
    hits: list[Hit] = []
    lines_before = 0
    for first, last, newlines in parts:
        hits += [(off, ln + lines_before, kind) for off, ln, kind in first + last]
        lines_before += newlines
    if len(hits) > 22000:  # the first hits (startup facts) and the last (the crash)
        hits = hits[:2000] + hits[-20000:]
    line_count = lines_before + (1 if total and not _ends_with(fp, total, nl) else 0)
    return windows_around(hits, fp, total, nl), line_count


def _ends_with(fp: BinaryIO, total: int, nl: bytes) -> bool:
    fp.seek(total - 1)
    return fp.read(1) == nl


def read_path(
    path: str, opened: tuple[BinaryIO, int, str] | None = None, prefetch: Prefetch | None = None
):
    """Read a path or ``-``: (records, size, line count, full parse, encoding, display name).
    ``opened``/``prefetch``: the file as :func:`open_input` gave it and a scan already started."""
    fp, size, name = opened or open_input(path)
    with fp:
        try:
            records, lines, full, encoding = read_records(fp, size, prefetch)
        except OSError as exc:
            raise InputError(f"{name}: read failed ({exc.strerror or exc})") from None
    return records, size, lines, full, encoding, name


def read_bytes(data: bytes) -> tuple[list[Record], int, bool, str]:
    """Like :func:`read_records` for bytes already in memory (a compressed log is read
    through its decompressor, as far as it can be; one that cannot is read as it is)."""
    try:
        data = formats.unpacked(data, STREAM_LIMIT)
    except formats.Unreadable:
        pass
    return read_records(io.BytesIO(data), len(data))
