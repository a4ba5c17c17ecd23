"""Compressed logs are read through their decompressor (gzip, bzip2, xz; zstd where the
``zstandard`` package is installed), by ``diagnose``, from stdin, by the library and by
``ingest``; a damaged stream keeps what came before the damage; a file that is no log at all is
refused in one line. Before, a compressed log was parsed as binary noise and read as healthy."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tracelens import engine
from tracelens.cli import main
from tracelens.read import formats, prescan

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
OOM = ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log"
PACK = {
    "gz": lambda b: gzip.compress(b, mtime=0),
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


def _top(report) -> str | None:
    return report.diagnoses[0].rule_id if report.diagnoses else None


def _json_top(out: str) -> str | None:
    diagnoses = json.loads(out)["diagnoses"]
    return diagnoses[0]["rule_id"] if diagnoses else None


@pytest.mark.parametrize("ext", sorted(PACK))
def test_diagnose_reads_a_compressed_log_as_the_log(tmp_path, capsys, ext):
    plain = engine.diagnose(SEED.read_bytes())
    assert _top(plain) is not None
    packed = tmp_path / f"server.log.{ext}"
    packed.write_bytes(PACK[ext](SEED.read_bytes()))
    assert main(["diagnose", "--format", "json", str(packed)]) == 0
    out = capsys.readouterr()
    assert _json_top(out.out) == _top(plain) and out.err == ""
    assert _top(engine.diagnose(packed.read_bytes())) == _top(plain)  # the library too


def test_a_compressed_log_on_stdin_is_read(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tracelens", "diagnose", "--format", "json", "-"],
        input=gzip.compress(OOM.read_bytes()),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert _json_top(proc.stdout.decode()) == _top(engine.diagnose(OOM.read_bytes()))


def test_a_stream_cut_short_keeps_what_came_before_and_says_so(tmp_path, capsys):
    # the crash at the start, then enough healthy lines that the cut falls far after it
    filler = b"".join(
        b"INFO 01-20 13:03:%02d [metrics.py:1] Avg throughput: %d tokens/s\n" % (k % 60, k)
        for k in range(20_000)
    )
    packed = gzip.compress(OOM.read_bytes() + filler, mtime=0)
    assert len(packed) // 2 > len(gzip.compress(OOM.read_bytes(), mtime=0)) * 4  # cut far after
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    assert main(["diagnose", "--format", "json", str(cut)]) == 0
    out = capsys.readouterr()
    assert _json_top(out.out) == _top(engine.diagnose(OOM.read_bytes()))
    err = out.err.strip().splitlines()
    assert len(err) == 1 and "cut short or damaged" in err[0] and "cut.log.gz" in err[0]


@pytest.mark.parametrize(
    "content,message",
    [
        (b"\x1f\x8b\x08\x00garbage", "not a readable gzip file"),
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "not a log: a PNG image"),
        (b"\x7fELF\x02\x01\x01" + bytes(64), "not a log: an executable (ELF)"),
        (b"(\xb5/\xfd" + bytes(16), "zstd-compressed: decompress it first"),
        ("tar.gz", "not a log: a tar archive"),
    ],
    ids=["damaged-gzip", "png", "elf", "zstd-without-package", "tar-gz"],
)
def test_what_cannot_be_read_as_a_log_is_one_line(tmp_path, capsys, monkeypatch, content, message):
    monkeypatch.setitem(sys.modules, "zstandard", None)  # as where the package is missing
    if content == "tar.gz":
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(SEED, arcname="server.log")
        content = buf.getvalue()
    bad = tmp_path / "input.bin"
    bad.write_bytes(content)
    assert main(["diagnose", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "input.bin" in err[0], err


def test_a_large_compressed_log_is_parsed_around_its_trouble(tmp_path, capsys):
    filler = b"INFO 01-20 13:03:40 [metrics.py:1] Avg prompt throughput: 1.0 tokens/s\n"
    data = filler * ((12 << 20) // len(filler)) + OOM.read_bytes()  # past the whole-parse limit
    packed = tmp_path / "big.log.xz"
    packed.write_bytes(lzma.compress(data, preset=0))
    assert main(["diagnose", "--format", "json", str(packed)]) == 0
    out = capsys.readouterr().out
    assert _json_top(out) == _top(engine.diagnose(OOM.read_bytes()))
    document = json.loads(out)["document"]
    assert document["full_parse"] is False and document["size"] == len(data)


def test_the_early_scan_leaves_a_compressed_file_to_the_reader(tmp_path, monkeypatch):
    big = tmp_path / "big.log.gz"
    big.write_bytes(gzip.compress(OOM.read_bytes(), mtime=0) + bytes(prescan.PARALLEL_MIN))
    monkeypatch.setattr(prescan, "_recall", lambda: ((b"x",), (b"y",), (b"z",)))
    monkeypatch.setattr(prescan, "_early", None)
    prescan.start_early([str(big)])
    assert prescan._early is None


def test_ingest_finds_and_reads_compressed_and_rotated_logs(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank0.log.gz").write_bytes(gzip.compress(SEED.read_bytes(), mtime=0))
    (logs / "rank1.log.1").write_bytes(OOM.read_bytes())
    (logs / "notes.json.gz").write_bytes(gzip.compress(b'{"a": 1}', mtime=0))  # not searched
    (logs / "broken.log.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), "--jobs", "1", str(logs)]) == 0
    err = capsys.readouterr().err
    sources = {s for (s,) in sqlite3.connect(db).execute("SELECT source FROM occurrences")}
    assert {Path(s).name for s in sources} == {"rank0.log.gz", "rank1.log.1"}
    assert "broken.log.gz" in err and "not a readable gzip file" in err
    assert "notes.json.gz" not in err


def test_the_signatures_are_told_apart():
    assert [formats.compression(PACK[k](b"x")) for k in sorted(PACK)] == ["bzip2", "gzip", "xz"]
    assert formats.compression(b"BZh9 not bzip2") is None
    assert formats.not_a_log(gzip.compress(b"x")) is None


def test_ingest_parses_a_large_compressed_log_around_its_trouble(tmp_path, capsys):
    filler = b"INFO 01-20 13:03:40 [metrics.py:1] Avg prompt throughput: 1.0 tokens/s\n"
    logs = tmp_path / "logs"
    logs.mkdir()
    data = filler * ((12 << 20) // len(filler)) + OOM.read_bytes()  # past the whole-read limit
    (logs / "big.log.xz").write_bytes(lzma.compress(data, preset=0))
    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), "--jobs", "1", str(logs)]) == 0
    rows = sqlite3.connect(db).execute("SELECT i.rule_id FROM incidents i").fetchall()
    assert rows == [(_top(engine.diagnose(OOM.read_bytes())),)], capsys.readouterr().err
