"""Inputs that are not regular files: devices, pipes, FIFOs, terminals, odd rule folders. None
hangs, none grows without bound, each either is read or gives one clear line."""

from __future__ import annotations

import os
import threading

import pytest
from worklimit import guard

from tracelens.read import scan
from tracelens.read.scan import InputError, read_path
from tracelens.rulebook.load import load

CRASH = b"RuntimeError: CUDA error: an illegal memory access was encountered\n"


@pytest.fixture()
def small_cap(monkeypatch):
    monkeypatch.setattr(scan, "STREAM_LIMIT", 4 << 20, raising=False)
    monkeypatch.setattr(scan, "FIFO_WAIT", 0.3, raising=False)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_is_read_up_to_the_cap_and_says_so(device, small_cap, capsys):
    with guard():
        _records, size, *_ = read_path(device)
    assert size == 4 << 20
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "read the first 4 MiB only" in err[0] and device in err[0]


def test_a_pipe_like_process_substitution_is_read_as_a_stream(small_cap, capsys):
    r, w = os.pipe()
    os.write(w, CRASH)
    os.close(w)
    try:
        records, size, *_ = read_path(f"/dev/fd/{r}")
    finally:
        os.close(r)
    assert size == len(CRASH) and records[0].text == CRASH.decode().strip()
    assert capsys.readouterr().err == ""


def test_a_fifo_without_writer_is_one_line_not_a_hang(tmp_path, small_cap):
    fifo = tmp_path / "in.log"
    os.mkfifo(fifo)
    with guard(), pytest.raises(InputError, match="a FIFO that nobody writes to"):
        read_path(str(fifo))


def test_a_fifo_with_a_writer_is_read(tmp_path, small_cap):
    fifo = tmp_path / "in.log"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as out:
            out.write(CRASH)

    writer = threading.Thread(target=write)
    writer.start()
    with guard():
        records, *_ = read_path(str(fifo))
    writer.join()
    assert [r.text for r in records] == [CRASH.decode().strip()]


def test_a_terminal_is_refused_in_one_line():
    main, sub = os.openpty()
    try:
        with guard(10), pytest.raises(InputError, match="is a terminal"):
            read_path(os.ttyname(sub))
    finally:
        os.close(main)
        os.close(sub)


def _write_rule(folder, name="r"):
    (folder / f"{name}.yaml").write_text("id: not-a-rule\n")


@pytest.mark.parametrize("odd", ["fifo", "symlink-loop", "dangling-symlink"])
def test_walking_a_rules_folder_opens_only_regular_files(tmp_path, odd):
    rules = tmp_path / "rules"
    rules.mkdir()
    if odd == "fifo":
        os.mkfifo(rules / "r.yaml")
    elif odd == "symlink-loop":
        (rules / "sub").mkdir()
        (rules / "sub" / "loop").symlink_to(rules, target_is_directory=True)
    else:
        (rules / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    _write_rule(rules, "broken")  # one real (invalid) rule file, reported once
    with guard(10):
        ruleset = load([rules], strict=False, cache=False)
    assert [os.path.basename(e.path) for e in ruleset.errors] == ["broken.yaml"]
