"""Python regexes built from the programs an earlier run compiled (tracelens.pyregex) are the
patterns ``re.compile`` gives: same flags, groups and matches; a cache file that is damaged,
refused or cannot be written only means compiling again."""

from __future__ import annotations

import re

import pytest

from tracelens import pyregex

PATTERNS = [
    (r"(?P<level>[EWIF])(?P<mmdd>\d{4}) (?P<time>\d\d:\d\d:\d\d)", 0),
    (r"^\s*File \"(?P<file>[^\"]+)\", line (?P<line>\d+)(?:, in (?P<func>.+))?$", 0),
    (r"out of memory|OOM", re.I),
    (r"(?i)größe|ü+", 0),
    (r"^(?:a|b)+$", re.M),
    (r"x(?=y)|(?<!z)w", 0),
    (r"(\w+)\s\1", 0),
]
TEXTS = [
    "E0412 13:03:40.123 boom",
    '  File "/home/user/x.py", line 12, in main',
    "CUDA Out Of Memory",
    "die GRÖSSE üü",
    "ab\nba\nc",
    "xy zw w",
    "hello hello world",
    "",
]


def _same(a: re.Pattern[str], b: re.Pattern[str]) -> None:
    assert type(a) is type(b)
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (
        b.pattern,
        b.flags,
        b.groups,
        b.groupindex,
    )
    for text in TEXTS:
        assert [m.groups() for m in a.finditer(text)] == [m.groups() for m in b.finditer(text)]
        assert [m.span() for m in a.finditer(text)] == [m.span() for m in b.finditer(text)]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A process that has compiled nothing yet, with its own cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def restart() -> None:
        monkeypatch.setattr(pyregex, "_loaded", None)
        monkeypatch.setattr(pyregex, "_new", {})
        monkeypatch.setattr(pyregex, "_patterns", {})

    restart()
    return restart


@pytest.mark.skipif(not pyregex._USABLE, reason="this Python lacks re's internals")
def test_a_later_run_builds_the_same_patterns_from_the_cached_programs(fresh, monkeypatch):
    first = {key: pyregex.compile_re(*key) for key in PATTERNS}
    for key, pattern in first.items():
        _same(pattern, re.compile(*key))
    pyregex.save()
    assert pyregex._path().exists() and not pyregex._new
    fresh()  # the next run

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed although the cache holds the program")

    monkeypatch.setattr(pyregex._parser, "parse", no_parse)
    for key in PATTERNS:
        _same(pyregex.compile_re(*key), re.compile(*key))
    assert not pyregex._new


def test_the_same_pattern_again_is_the_same_object(fresh):
    assert pyregex.compile_re(r"a+b") is pyregex.compile_re(r"a+b")
    assert pyregex.compile_re(r"a+b") is not pyregex.compile_re(r"a+b", re.I)


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", b"\xe9\x00\x00\x00"])
def test_a_damaged_cache_file_means_compiling_again(fresh, damage):
    pyregex.compile_re(r"(?P<n>\d+) items")
    pyregex.save()
    pyregex._path().write_bytes(damage)
    fresh()
    _same(pyregex.compile_re(r"(?P<n>\d+) items"), re.compile(r"(?P<n>\d+) items"))


@pytest.mark.skipif(not pyregex._USABLE, reason="this Python lacks re's internals")
def test_a_program_sre_refuses_is_compiled_again(fresh):
    import marshal

    key = (r"(?P<n>\d+) items", 0)
    pyregex.compile_re(*key)
    pyregex.save()
    programs = marshal.loads(pyregex._path().read_bytes())
    flags, code, groups, groupindex, indexgroup = programs[key]
    programs[key] = (flags, [99999, *code[1:]], groups, groupindex, indexgroup)  # not a program
    pyregex._path().write_bytes(marshal.dumps(programs))
    fresh()
    _same(pyregex.compile_re(*key), re.compile(*key))


def test_a_bad_pattern_raises_what_re_raises(fresh):
    with pytest.raises(re.error):
        pyregex.compile_re(r"(unclosed")


def test_a_cache_folder_that_cannot_be_written_is_no_error(fresh, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where the folder would be
    pyregex.compile_re(r"nothing (\w+) kept")
    pyregex.save()
    assert pyregex._new  # still to be written, by a later run


def test_the_command_writes_the_programs_it_compiled(tmp_path):
    import os
    import subprocess
    import sys

    log = tmp_path / "x.log"
    log.write_text("INFO start\nRuntimeError: boom\n")
    env = dict(
        os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), TRACELENS_DB=str(tmp_path / "db")
    )
    subprocess.run(
        [sys.executable, "-m", "tracelens", "diagnose", str(log)], env=env, capture_output=True
    )
    written = list((tmp_path / "cache" / "tracelens").glob("regex-programs-*.marshal"))
    assert len(written) == (1 if pyregex._USABLE else 0)


@pytest.mark.skipif(not pyregex._USABLE, reason="this Python lacks re's internals")
def test_patterns_built_from_a_logs_text_are_not_kept(tmp_path):
    """Only tracelens's own patterns are kept: those built from a log's text (its host labels,
    its learned prefixes) are not, so the file does not grow with every log read."""
    import os
    import subprocess
    import sys

    env = dict(
        os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), TRACELENS_DB=str(tmp_path / "db")
    )
    runs = [
        "INFO start\nRuntimeError: boom\n",
        "".join(f"qzhost-{k % 3}: step {k} ok\n" for k in range(12))
        + "qzhost-1: RuntimeError: boom\n",
        "".join(f"[qzjob-7|rank{k % 2}] step {k}\n" for k in range(12))
        + "[qzjob-7|rank1] ValueError: x\n",
    ]
    import marshal

    for k, text in enumerate(runs):
        log = tmp_path / f"{k}.log"
        log.write_text(text)
        subprocess.run(
            [sys.executable, "-m", "tracelens", "diagnose", str(log)], env=env, capture_output=True
        )
    (path,) = (tmp_path / "cache" / "tracelens").glob("regex-programs-*.marshal")
    kept = [source for source, _flags in marshal.loads(path.read_bytes())]
    assert len(kept) > 50
    assert not [p for p in kept if "qzhost" in p or "qzjob" in p]
