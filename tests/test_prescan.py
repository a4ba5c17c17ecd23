"""The scan of a large log started before the command line is parsed (tracelens.read.prescan):
which command lines start it, that the running scan is handed over only for the same log and
pattern set, and that a scan nobody takes is stopped."""

from __future__ import annotations

import os

import click
import pytest
from tiers import one_quick

from tracelens.cli.app import _open, _read
from tracelens.cli.diagnose import diagnose
from tracelens.engine import report
from tracelens.read import prescan, scan

SEED = b"".join(
    [
        b"INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.8.5\n",
        b"INFO 01-20 13:00:01 [loggers.py:1] Avg prompt throughput: 1.0 tokens/s\n" * 3000,
        b"Traceback (most recent call last):\n",
        b'  File "/app/x.py", line 3, in run\n',
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        b"GPU 0 has a total capacity of 79.11 GiB of which 1.00 GiB is free.\n",
    ]
)


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["big.log"], "big.log"),
        (["--format", "json", "big.log"], "big.log"),
        (["big.log", "--format", "json", "--full"], "big.log"),
        (["--rules", "my-rules", "--db", "x.db", "big.log"], "big.log"),
        (["--format=json", "--fail-on", "error", "big.log"], "big.log"),
        (["--redact-regex", "secret", "--no-redact", "--save", "big.log"], "big.log"),
        (["--", "-odd-name.log"], "-odd-name.log"),
        (["-"], "-"),
        (["-h", "big.log"], None),  # short options are left to the parser
        (["a.log", "b.log"], None),
        ([], None),
        (["--format"], None),
    ],
)
def test_the_log_of_a_diagnose_command_line(args, path):
    assert prescan.diagnosed_path(args) == path


def test_the_options_that_take_a_value_are_the_commands():
    valued = {
        opt
        for p in diagnose.params
        if isinstance(p, click.Option) and not p.is_flag
        for opt in p.opts
    }
    assert prescan._VALUED == valued


@pytest.fixture
def large(tmp_path, monkeypatch):
    """A log taken as large (scanned in two processes), an empty cache folder, no early scan."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(prescan, "PARALLEL_MIN", 1)
    monkeypatch.setattr(scan, "FULL_PARSE_LIMIT", 1000)
    monkeypatch.setattr(prescan.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(prescan, "_early", None)
    log = tmp_path / "big.log"
    log.write_bytes(SEED)
    return str(log)


def _diagnosis(path, early=None):
    rep = report(_read(path, early))
    return [(d.rule_id, [e.line for e in d.evidence]) for d in rep.diagnoses], rep


def _children_gone(pids):
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return True


def test_no_early_scan_before_a_large_scan_wrote_its_pattern_set(large):
    prescan.start_early([large])
    assert prescan._early is None
    expected, _ = _diagnosis(large)  # the normal path scans in parallel and writes the set
    assert expected and expected[0][0]
    prescan.start_early([large])
    assert prescan._early is not None
    started = prescan._early[2]
    pids = [pid for pid, _ in started.children]
    assert len(pids) == 2
    opened, prefetch = _open(large)
    assert prefetch is started and opened[0].name == large  # the running scan, handed over
    assert _diagnosis(large, (opened, prefetch))[0] == expected
    assert _children_gone(pids)


def test_an_early_scan_of_another_set_or_log_is_stopped(large, tmp_path):
    expected, _ = _diagnosis(large)
    stale = prescan.ScanSet([b"Traceback"], [b"ERROR"], [b"vllm=="])
    prescan.remember(stale)  # not written: the current set's file exists already
    assert prescan._recall() == scan.SCANSET.groups
    os.remove(prescan._set_file())
    prescan.remember(stale)  # a set written by another version of the sources
    prescan.start_early([large])
    pids = [pid for pid, _ in prescan._early[2].children]
    assert prescan.take(large, scan.SCANSET) is None  # not the current set: stopped
    assert prescan._early is None and _children_gone(pids)
    assert _diagnosis(large)[0] == expected

    other = tmp_path / "other.log"
    other.write_bytes(SEED)
    os.remove(prescan._set_file())
    prescan.remember(scan.SCANSET)
    prescan.start_early([str(other)])
    pids = [pid for pid, _ in prescan._early[2].children]
    assert prescan.take(large, scan.SCANSET) is None
    assert _children_gone(pids)


def test_a_scan_nobody_takes_is_stopped(large):
    _diagnosis(large)
    prescan.start_early([large])
    pids = [pid for pid, _ in prescan._early[2].children]
    prescan.discard()
    assert prescan._early is None and _children_gone(pids)


@pytest.mark.parametrize(
    "content",
    # each case scans in two processes: the quick tier damages the file one way
    one_quick([b"", b"one group only", b"\xff\xfe garbage\n\n\n\n\n\n"], keep=2),
    ids=["empty", "one-group", "garbage"],
)
def test_a_damaged_pattern_set_file_never_breaks_a_run(large, content):
    expected, _ = _diagnosis(large)
    with open(prescan._set_file(), "wb") as out:
        out.write(content)
    prescan.start_early([large])  # never raises; a wrong set is refused when taken
    opened, prefetch = _open(large)
    assert _diagnosis(large, (opened, prefetch))[0] == expected
    prescan.discard()
