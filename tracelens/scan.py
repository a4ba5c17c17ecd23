"""Find where the trouble is in a large log without decoding all of it.

A small log (up to :data:`FULL_PARSE_LIMIT`) is parsed whole. A larger one is read once in
chunks; one linear-time byte search (RE2) finds tracebacks, error lines and fact lines, and
only windows of bytes around them are decoded and parsed. Memory stays flat in the log's size.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections import deque
from dataclasses import dataclass
from typing import BinaryIO

import re2

from .logread import records_from_bytes, sniff_encoding, records_from_text, decode
from .models import Record

FULL_PARSE_LIMIT = 8 << 20
CHUNK = 8 << 20
WINDOW_BUDGET = 48 << 20
"""Most bytes of windows parsed from one log."""


class InputError(Exception):
    """The input cannot be read (missing, a directory, unreadable). One-line message."""


_OPTS = re2.Options()
_OPTS.log_errors = False

_TB = rb"Traceback \(most recent call last\)|Fatal Python error|Exception Group Traceback"
_ERR = (
    rb"ERROR|CRITICAL|FATAL|Error|Exception|error:|Killed|Bus error|Segmentation fault|"
    rb"core dumped|NCCL WARN|CUDA error|out of memory|Aborted|terminate called|exitcode|"
    rb"SIGKILL|SIGSEGV|SIGABRT|died unexpectedly|[EF]\d{4} \d\d:\d\d"
)
_FACT = (
    rb"Initializing a V1 LLM engine|Initializing an LLM engine|vLLM API server version|"
    rb"non-default args|Resolved architecture|Using max model len|backend|PyTorch version|"
    rb"CUDA used to build|NVIDIA-SMI|Nvidia driver version|vLLM Version|Python version|"
    rb"\[pip3\]|NCCL version|capability|args: Namespace|server_args|Root Cause|GPU \d+:"
)
_TRIGGERS = re2.compile(b"(" + _TB + b")|(" + _ERR + b")|(" + _FACT + b")", _OPTS)
_TABLES = (b"NVIDIA-SMI", b"PyTorch version", b"Root Cause", b"Collecting environment")

# (bytes before, bytes after) each kind of hit
_CONTEXT = {1: (8 << 10, 1 << 20), 2: (8 << 10, 32 << 10), 3: (0, 512)}


@dataclass
class Window:
    start: int
    end: int
    anchor: int
    """Offset of the start of a line whose number is known."""
    anchor_line: int


def open_input(path: str) -> tuple[BinaryIO, int, str]:
    """Open a path or ``-`` (stdin, spooled so it can be read twice). Raises InputError."""
    if path == "-":
        spool = tempfile.SpooledTemporaryFile(max_size=FULL_PARSE_LIMIT)
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
        size = 0
        while True:
            chunk = stdin.read(CHUNK)
            if not chunk:
                break
            if isinstance(chunk, str):
                chunk = chunk.encode()
            spool.write(chunk)
            size += len(chunk)
        spool.seek(0)
        return spool, size, "<stdin>"
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a log file")
    try:
        fp = open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open ({exc.strerror or exc})") from None
    size = os.fstat(fp.fileno()).st_size
    return fp, size, path


def read_records(fp: BinaryIO, size: int) -> tuple[list[Record], int, bool, str]:
    """Records of the whole log, or of the windows around trouble for a large one.

    Returns (records, line count, whether the whole log was parsed, encoding).
    """
    head = fp.read(4)
    encoding, bom = sniff_encoding(head)
    fp.seek(0)
    if size <= FULL_PARSE_LIMIT or encoding != "utf-8":
        data = fp.read()
        text = decode(data[bom:], encoding)
        records = records_from_text(text, 1)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return records, lines, True, encoding
    windows, line_count = find_windows(fp)
    records = []
    for w in windows:
        fp.seek(w.start)
        data = fp.read(w.end - w.start)
        first_line = w.anchor_line - data.count(b"\n", 0, w.anchor - w.start)
        records.extend(records_from_bytes(data, first_line))
    return records, line_count, False, encoding


def find_windows(fp: BinaryIO) -> tuple[list[Window], int]:
    """One pass over the bytes: the windows to parse and the log's line count."""
    first_hits: list[tuple[int, int, int]] = []
    last_hits: deque[tuple[int, int, int]] = deque(maxlen=20000)
    fp.seek(0)
    base_off = 0  # offset of buf[0]
    line = 1  # line number at buf[counted]
    carry = b""
    eof = False
    last_line_start = -1
    while not eof:
        chunk = fp.read(CHUNK)
        eof = not chunk
        buf = carry + chunk
        if not eof:
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                carry = buf
                continue
            carry, buf = buf[cut:], buf[:cut]
        counted = 0
        for m in _TRIGGERS.finditer(buf):
            start = buf.rfind(b"\n", 0, m.start()) + 1
            if base_off + start == last_line_start and m.lastindex != 1:
                continue
            line += buf.count(b"\n", counted, start)
            counted = start
            kind = m.lastindex or 2
            if kind == 3 and any(t in buf[start : start + 200] for t in _TABLES):
                kind = 4
            hit = (base_off + start, line, kind)
            last_line_start = base_off + start
            if len(first_hits) < 2000:
                first_hits.append(hit)
            else:
                last_hits.append(hit)
        line += buf.count(b"\n", counted)
        base_off += len(buf)
        if eof:
            break
    total = base_off
    line_count = line - 1 + (1 if carry or (total and not _ends_with_newline(fp, total)) else 0)
    hits = first_hits + list(last_hits)
    windows: list[Window] = []
    for off, ln, kind in hits:
        before, after = _CONTEXT.get(kind, (0, 16 << 10))
        w = Window(max(0, off - before), min(total, off + after), off, ln)
        if windows and w.start <= windows[-1].end:
            windows[-1].end = max(windows[-1].end, w.end)
        else:
            windows.append(w)
    windows = _within_budget(windows)
    for w in windows:
        _snap(fp, w, total)
    return windows, line_count


def _ends_with_newline(fp: BinaryIO, total: int) -> bool:
    fp.seek(total - 1)
    return fp.read(1) == b"\n"


def _within_budget(windows: list[Window]) -> list[Window]:
    """Keep the first windows (startup facts) and the last (the crash) within the budget."""
    if sum(w.end - w.start for w in windows) <= WINDOW_BUDGET:
        return windows
    kept_head: list[Window] = []
    kept_tail: list[Window] = []
    budget_head, budget_tail = WINDOW_BUDGET // 8, WINDOW_BUDGET - WINDOW_BUDGET // 8
    for w in windows:
        if budget_head - (w.end - w.start) < 0:
            break
        budget_head -= w.end - w.start
        kept_head.append(w)
    for w in reversed(windows[len(kept_head) :]):
        if budget_tail - (w.end - w.start) < 0:
            break
        budget_tail -= w.end - w.start
        kept_tail.append(w)
    return kept_head + kept_tail[::-1]


def _snap(fp: BinaryIO, w: Window, total: int) -> None:
    """Move a window's edges to line boundaries."""
    if w.start > 0:
        fp.seek(w.start - 1)
        probe = fp.read(min(w.anchor - w.start + 1, 1 << 20))
        nl = probe.find(b"\n")
        w.start = w.start + nl if nl >= 0 else w.anchor
    if w.end < total:
        fp.seek(w.end)
        probe = fp.read(1 << 16)
        nl = probe.find(b"\n")
        w.end = w.end + nl + 1 if nl >= 0 else min(total, w.end + len(probe))


def read_path(path: str) -> tuple[list[Record], int, int, bool, str, str]:
    """Read a path or ``-``: (records, size, line count, full parse, encoding, display name)."""
    fp, size, name = open_input(path)
    with fp:
        try:
            records, lines, full, encoding = read_records(fp, size)
        except OSError as exc:
            raise InputError(f"{name}: read failed ({exc.strerror or exc})") from None
    return records, size, lines, full, encoding, name


def read_bytes(data: bytes) -> tuple[list[Record], int, bool, str]:
    """Like :func:`read_records` for bytes already in memory."""
    return read_records(io.BytesIO(data), len(data))
