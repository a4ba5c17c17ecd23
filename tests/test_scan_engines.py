"""The two scanning engines of a large log (tracelens.read.multiscan): Hyperscan lists where
matches end and RE2 reads only those lines; the RE2 path searches every byte. Both must give
the same hits, line numbers and windows on any input."""

from __future__ import annotations

import io
import os
import random

import pytest

from tracelens.read import multiscan, prescan, scan

HAS_HYPERSCAN = multiscan._choose() == "hyperscan"
needs_hyperscan = pytest.mark.skipif(not HAS_HYPERSCAN, reason="hyperscan does not import here")

CRASH = (
    b"INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
    b"ERROR 01-20 13:00:05 [core.py:1] EngineCore failed to start.\n"
    b"Traceback (most recent call last):\n"
    b'  File "a.py", line 1, in f\n'
    b"RuntimeError: CUDA error: out of memory\n"
)


def _junk(n: int, seed: int) -> bytes:
    rnd = random.Random(seed)
    words = [b"ERROR", b"Traceback (most recent call last)", b"NCCL version 2.21.5", b"\x00"]
    out = bytearray(rnd.randbytes(n))
    for _ in range(n // 400):
        at = rnd.randrange(n)
        out[at:at] = rnd.choice(words)
    return bytes(out)


def _spanning(chunk: int) -> bytes:
    """Lines of every length around ``chunk``, with a trigger at each end of each line."""
    lines = []
    for k in range(40):
        body = b"x" * ((chunk // 3) * (k % 7) + k)
        lines.append(b"ERROR " + body + b" Killed process 12")
    return b"\n".join(lines) + b"\n"


INPUTS = {
    "lf": CRASH * 3,
    "crlf": CRASH.replace(b"\n", b"\r\n") * 3,
    "bare-cr": CRASH.replace(b"\n", b"\r") * 3,
    "no-final-newline": CRASH.rstrip(b"\n"),
    "empty": b"",
    "no-trigger": b"INFO all good\n" * 5000,
    "header-after-error": b"ERROR x Traceback (most recent call last):\n" * 3,
    "fact-then-error": b"NCCL version 2.21.5 then NCCL WARN timeout\n" * 3,
    "tables": b"| NVIDIA-SMI 550.54 |\nCollecting environment information...\nRoot Cause\n",
    "regex-patterns": b"E1201 12:00:01.123 x.cc:1] bad\nGPU 0: NVIDIA H100\nF0101 00:00 x\n",
    "exception-group": b"  + Exception Group Traceback (most recent call last):\n" * 2,
    "many-triggers": (b"ERROR Killed SIGKILL " * 3000 + b"\n") * 4,
    "dense-lines": b"ERROR a\n" * 20_000,  # more matches than the finder lists: RE2 takes over
    "binary-junk": _junk(300_000, 1),
    "binary-junk-cr": _junk(300_000, 2).replace(b"\n", b"\r"),
    "spanning-chunks": _spanning(50_000),
    "one-20mb-line": b"ERROR at the start "
    + b"y" * (10 << 20)
    + b" Segmentation fault "
    + b"z" * (10 << 20)
    + b" Traceback (most recent call last):\n",
}


def _reader(data: bytes):
    fp = io.BytesIO(data)

    def read_at(off: int, n: int) -> tuple[bytes, int]:
        fp.seek(off)
        return fp.read(n), 0

    return read_at


def _scan_with(engine: str, data: bytes, monkeypatch, chunk: int | None = None):
    monkeypatch.setattr(multiscan, "ENGINE", engine)
    if chunk is not None:
        monkeypatch.setattr(prescan, "CHUNK", chunk)
    nl = scan.line_end_of(io.BytesIO(data))
    return prescan.scan_range(scan.SCANSET, _reader(data), 0, len(data), nl)


def _windows_with(engine: str, data: bytes, monkeypatch):
    monkeypatch.setattr(multiscan, "ENGINE", engine)
    monkeypatch.setattr(prescan, "CHUNK", 50_000)
    monkeypatch.setattr(prescan, "PARALLEL_MIN", 1 << 40)
    windows, lines = scan.find_windows(io.BytesIO(data))
    return [(w.start, w.end, w.anchor, w.anchor_line) for w in windows], lines


@needs_hyperscan
@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("chunk", [None, 50_000], ids=["8MiB-chunks", "50KB-chunks"])
def test_both_engines_find_the_same_hits(name, chunk, monkeypatch):
    data = INPUTS[name]
    fast = _scan_with("hyperscan", data, monkeypatch, chunk)
    assert multiscan.finder(scan.PATTERNS) is not None  # the Hyperscan path really ran
    assert fast == _scan_with("re2", data, monkeypatch, chunk)


@needs_hyperscan
@pytest.mark.parametrize(
    "name", ["lf", "crlf", "bare-cr", "binary-junk", "spanning-chunks", "dense-lines"]
)
def test_both_engines_give_the_same_windows(name, monkeypatch):
    data = INPUTS[name] * (4 if len(INPUTS[name]) < 100_000 else 1)
    assert _windows_with("hyperscan", data, monkeypatch) == _windows_with("re2", data, monkeypatch)


@pytest.mark.parametrize(
    "name,hits",
    [
        ("lf", [(1, 3), (2, 2), (3, 1), (5, 2)]),
        ("crlf", [(1, 3), (2, 2), (3, 1), (5, 2)]),
        ("bare-cr", [(1, 3), (2, 2), (3, 1), (5, 2)]),
        ("header-after-error", [(1, 2), (1, 1)]),
        ("fact-then-error", [(1, 3)]),
        ("tables", [(1, 4), (2, 4), (3, 4)]),
        ("regex-patterns", [(1, 2), (2, 3), (3, 2)]),
        ("exception-group", [(1, 1)]),
    ],
)
@pytest.mark.parametrize("engine", ["hyperscan", "re2"])
def test_hits_on_the_first_lines(name, hits, engine, monkeypatch):
    if engine == "hyperscan" and not HAS_HYPERSCAN:
        pytest.skip("hyperscan does not import here")
    first, _last, _lines = _scan_with(engine, INPUTS[name], monkeypatch)
    assert [(ln, kind) for _off, ln, kind in first][: len(hits)] == hits


@needs_hyperscan
@pytest.mark.parametrize(
    "data,dense",
    [(b"ERROR a\n" * 20_000, True), (b"ERROR a" + b"x" * 600 + b"\n" * 1000, False)],
)
def test_a_chunk_of_dense_matches_is_left_to_re2(data, dense):
    find = multiscan.finder(scan.PATTERNS)
    assert find is not None
    assert (find(data, len(data)) is None) == dense


@pytest.mark.parametrize(
    "pattern,lit",
    [
        (rb"Traceback \(most recent call last\)", b"Traceback (most recent call last)"),
        (rb"\[pip3\]", b"[pip3]"),
        (rb"vllm==", b"vllm=="),
        (rb"GPU \d+:", None),
        (rb"[EF]\d{4} \d\d:\d\d", None),
        (rb"a|b", None),
        (rb"trailing\\", b"trailing\\"),
        (b"dangling\\", None),
    ],
)
def test_literal(pattern, lit):
    assert multiscan.literal(pattern) == lit


@pytest.mark.parametrize(
    "patterns,kept",
    [
        ([b"ERROR", rb"ERROR\:", rb"ERROR\:\ "], [b"ERROR"]),
        ([b"Killed", rb"Out\ of\ memory\:\ Killed", b"Aborted"], [b"Killed", b"Aborted"]),
        ([b"Error", rb"GPU \d+:", b"OutOfMemoryError"], [b"Error", rb"GPU \d+:"]),
        ([rb"ServerArgs\(", b"server_args"], [rb"ServerArgs\(", b"server_args"]),
    ],
)
def test_minimal_drops_literals_that_hold_another(patterns, kept):
    # a line holding the longer literal holds the shorter: the same lines are candidates
    assert sorted(multiscan.minimal(patterns)) == sorted(kept)


def _may_match_a_line_end(pattern: bytes) -> bool:
    """Conservative: anything but literals, escaped punctuation, ``\\d`` and simple classes."""
    rest = pattern.replace(rb"\d", b"")
    for k in range(0x20, 0x7F):
        if not chr(k).isalnum():
            rest = rest.replace(b"\\" + bytes([k]), b"")
    return b"\\" in rest or b"." in rest or b"[^" in rest or b"\n" in pattern or b"\r" in pattern


def test_no_scan_pattern_can_match_a_line_end():
    # the Hyperscan path starts RE2 at the line where a match ends: no match may span lines
    assert len(scan.PATTERNS) > 100
    assert [p for p in scan.PATTERNS if _may_match_a_line_end(p)] == []


@pytest.mark.parametrize(
    "pattern,spans", [(rb"a\sb", True), (rb"a.b", True), (rb"[^x]", True), (rb"a\ b\d", False)]
)
def test_the_line_end_check_itself(pattern, spans):
    assert _may_match_a_line_end(pattern) == spans


def test_fact_triggers_are_part_of_the_one_pattern_set():
    from tracelens.facts import EXTRACTORS, SCAN_PATTERNS

    assert set(SCAN_PATTERNS) <= set(scan.PATTERNS)
    assert {e.trigger.encode() for e in EXTRACTORS if e.scan} <= {
        multiscan.literal(p) for p in SCAN_PATTERNS
    }


@needs_hyperscan
@pytest.mark.parametrize("env,engine", [("re2", "re2"), ("RE2", "re2"), ("", "hyperscan")])
def test_the_engine_is_chosen_from_the_environment(env, engine, monkeypatch):
    monkeypatch.setenv("TRACELENS_SCAN_ENGINE", env)
    assert multiscan._choose() == engine


def test_without_hyperscan_the_engine_is_re2(monkeypatch):
    import sys

    monkeypatch.delenv("TRACELENS_SCAN_ENGINE", raising=False)
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # import fails
    assert multiscan._choose() == "re2"


@needs_hyperscan
@pytest.mark.parametrize("cached", [b"", b"not a database", None])
def test_the_compiled_database_is_cached_and_a_bad_cache_is_rebuilt(cached, tmp_path, monkeypatch):
    import hyperscan

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    exprs = [b"ERROR", rb"GPU \d+:"]
    multiscan._database(exprs)
    (path,) = (tmp_path / "tracelens").glob("scan-*.hsdb")
    if cached is not None:
        path.write_bytes(cached)
    else:  # a good cache file: loading it compiles nothing

        def no_compile(*args, **kwargs):
            raise AssertionError("compiled although the cache holds the database")

        monkeypatch.setattr(hyperscan, "Database", no_compile)
    db = multiscan._database(exprs)
    found: list[int] = []
    db.scan(b"x ERROR GPU 3: y", match_event_handler=lambda *m: found.append(m[2]))
    assert sorted(found) == [7, 14]
    assert path.read_bytes().startswith(b"ERROR\n")  # rewritten when it was bad


@pytest.mark.parametrize("large", [False, True], ids=["50KB-log", "9MB-log"])
def test_hyperscan_is_imported_only_for_a_log_large_enough_to_scan(large, tmp_path):
    import subprocess
    import sys

    log = tmp_path / "x.log"
    log.write_bytes(b"INFO request ok\n" * (600_000 if large else 3000) + CRASH)  # > 8 MiB: scanned
    code = (
        "import sys; from tracelens.engine import parse_path; doc = parse_path(sys.argv[1]); "
        "print(doc.full_parse, 'hyperscan' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(log)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [str(not large), str(large and HAS_HYPERSCAN)]


class _NoReadinto:
    """A file object with read and seek only (SpooledTemporaryFile before Python 3.11)."""

    def __init__(self, data: bytes):
        self._fp = io.BytesIO(data)
        self.seek, self.read, self.tell = self._fp.seek, self._fp.read, self._fp.tell


@pytest.mark.parametrize("reader", ["no-readinto", "no-preadv"])
def test_chunks_read_without_readinto_or_preadv_give_the_same_windows(
    reader, tmp_path, monkeypatch
):
    data = INPUTS["spanning-chunks"] * 4
    expected = _windows_with("re2", data, monkeypatch)
    if reader == "no-readinto":
        windows, lines = scan.find_windows(_NoReadinto(data))  # type: ignore[arg-type]
    else:  # the scanning processes read with os.pread instead
        monkeypatch.delattr(scan.os, "preadv", raising=False)
        monkeypatch.setattr(prescan, "PARALLEL_MIN", 1)
        monkeypatch.setattr(scan.os, "cpu_count", lambda: 2)
        log = tmp_path / "x.log"
        log.write_bytes(data)
        with open(log, "rb") as fp:
            assert prescan._parallel_ok(fp, len(data)) == 2  # really in forked processes
            windows, lines = scan.find_windows(fp)
    assert ([(w.start, w.end, w.anchor, w.anchor_line) for w in windows], lines) == expected


def _bytes_count(data, sep, start, end):
    return data.count(sep, start, end)


@pytest.mark.parametrize("name", ["lf", "crlf", "bare-cr", "binary-junk", "spanning-chunks"])
def test_the_line_counter_gives_the_hits_and_line_count_of_bytes_count(name, monkeypatch):
    # StringZilla's SIMD count where it imports; bytes.count is the fallback and the reference
    data = INPUTS[name] * 3
    found = _scan_with("re2", data, monkeypatch, 50_000)
    monkeypatch.setattr(prescan, "count_lines", _bytes_count)
    assert found == _scan_with("re2", data, monkeypatch, 50_000)
    assert found[2] == data.count(scan.line_end_of(io.BytesIO(data)))


def test_the_line_counter_counts_one_byte_in_any_range():
    rnd = random.Random(7)
    data = bytearray(rnd.choice(b"ab\n\r") for _ in range(5000))
    for sep in (b"\n", b"\r"):
        for _ in range(200):
            a = rnd.randrange(len(data) + 1)
            b = rnd.randrange(a, len(data) + 1)
            assert prescan.count_lines(data, sep, a, b) == data.count(sep, a, b)
    assert prescan.count_lines(bytearray(), b"\n", 0, 0) == 0


@pytest.mark.parametrize("name", ["lf", "crlf", "bare-cr", "binary-junk", "spanning-chunks"])
@pytest.mark.parametrize("engine", ["hyperscan", "re2"])
def test_a_mapped_file_gives_the_hits_of_a_read_one(name, engine, monkeypatch, tmp_path):
    # each chunk mapped from the page boundary below it (a chunk of 50,000 bytes starts
    # mid-page: the mapping holds bytes before it that are not scanned again)
    if engine == "hyperscan" and not HAS_HYPERSCAN:
        pytest.skip("hyperscan does not import here")
    if not prescan.FAST_COUNT:
        pytest.skip("no StringZilla here: chunks are read, not mapped")
    data = INPUTS[name] * 3
    path = tmp_path / "big.log"
    path.write_bytes(data)
    monkeypatch.setattr(multiscan, "ENGINE", engine)
    monkeypatch.setattr(prescan, "CHUNK", 50_000)
    nl = scan.line_end_of(io.BytesIO(data))
    fd = os.open(path, os.O_RDONLY)
    try:
        mapped = prescan.scan_range(scan.SCANSET, prescan.mapped_reader(fd), 0, len(data), nl)
        read = prescan.scan_range(scan.SCANSET, _reader(data), 0, len(data), nl)
        middle = len(data) // 3 + 7  # a range that starts off a page boundary, as a child's does
        middle = data.index(nl, middle) + 1
        part = prescan.scan_range(scan.SCANSET, prescan.mapped_reader(fd), middle, len(data), nl)
    finally:
        os.close(fd)
    assert mapped == read
    assert part == prescan.scan_range(scan.SCANSET, _reader(data), middle, len(data), nl)
