"""Large logs: only the windows around trouble are parsed, with the same answers and the
same line numbers as a whole parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracelens.engine import diagnose, parse_path
from tracelens.read import multiscan, prescan, scan

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
REQ = (
    "(APIServer pid=1) INFO 01-20 13:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt "
    "throughput: 0.0 tokens/s, Avg generation throughput: 31.2 tokens/s, Running: 1 reqs, "
    "Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 52.1%\n"
)


def big_log(path: Path, crash: bytes, n: int = 6000) -> int:
    """Startup facts, n request lines, the crash; returns the crash's first line number."""
    head = (
        "INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
        "INFO 01-20 13:00:01 [core.py:76] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='/models/m', tensor_parallel_size=2, kv_cache_dtype=auto\n"
    )
    body = "".join(REQ.format(m=k // 60 % 60, s=k % 60) for k in range(n))
    data = (head + body).encode() + crash
    path.write_bytes(data)
    return head.count("\n") + n + 1


@pytest.fixture(autouse=True, params=["hyperscan", "re2"])
def engine(request, monkeypatch):
    """Every test here runs on both scanning engines (tests/test_scan_engines.py compares them)."""
    if request.param == "hyperscan" and multiscan._choose() != "hyperscan":
        pytest.skip("hyperscan does not import here")
    monkeypatch.setattr(multiscan, "ENGINE", request.param)
    return request.param


@pytest.fixture()
def small_limits(monkeypatch):
    monkeypatch.setattr(scan, "FULL_PARSE_LIMIT", 64 << 10)
    monkeypatch.setattr(prescan, "CHUNK", 50_000)  # chunk edges fall inside lines


def test_windows_give_the_same_diagnosis_and_lines(tmp_path, small_limits):
    crash = SEED.read_bytes()
    log = tmp_path / "big.log"
    first = big_log(log, crash)
    doc = parse_path(str(log))
    assert not doc.full_parse
    whole = diagnose(crash)
    from tracelens.engine import report

    rep = report(doc)
    assert rep.diagnoses[0].rule_id == whole.diagnoses[0].rule_id
    shift = first - 1
    assert [e.line - shift for e in rep.diagnoses[0].evidence if e.line > shift] == [
        e.line for e in whole.diagnoses[0].evidence
    ]
    assert doc.line_count == first - 1 + crash.count(b"\n")
    assert rep.facts["vllm_version"]  # startup facts are read from their own window


def test_line_numbers_match_the_file(tmp_path, small_limits):
    log = tmp_path / "big.log"
    big_log(log, b"RuntimeError: CUDA error: an illegal memory access was encountered\n")
    lines = log.read_bytes().split(b"\n")
    doc = parse_path(str(log))
    for rec in doc.records:
        assert lines[rec.line - 1].decode().endswith(rec.text)


def test_log_without_trouble_parses_almost_nothing(tmp_path, small_limits):
    log = tmp_path / "quiet.log"
    big_log(log, b"")
    doc = parse_path(str(log))
    assert len(doc.records) < 50
    assert doc.tracebacks == [] and doc.errors == []


def test_parallel_scan_finds_the_same_windows_as_one_process(tmp_path, small_limits, monkeypatch):
    crash = SEED.read_bytes()
    log = tmp_path / "big.log"
    big_log(log, crash, n=20000)
    with open(log, "rb") as fp:
        monkeypatch.setattr(prescan, "PARALLEL_MIN", 1 << 40)
        one = scan.find_windows(fp)
        monkeypatch.setattr(prescan, "PARALLEL_MIN", 1)
        monkeypatch.setattr(scan.os, "cpu_count", lambda: 3)
        several = scan.find_windows(fp)
    assert [(w.start, w.end, w.anchor, w.anchor_line) for w in one[0]] == [
        (w.start, w.end, w.anchor, w.anchor_line) for w in several[0]
    ]
    assert one[1] == several[1]


def test_large_cr_only_log_numbers_its_lines(tmp_path, small_limits):
    crash = b'Traceback (most recent call last):\r  File "a.py", line 1, in f\rValueError: bad\r'
    log = tmp_path / "mac.log"
    log.write_bytes(b"INFO 01-20 13:00:00 [a.py:1] request ok\r" * 5000 + crash)
    doc = parse_path(str(log))
    assert not doc.full_parse and doc.line_count == 5003
    assert [(r.line, r.text) for r in doc.records][-3:] == [
        (5001, "Traceback (most recent call last):"),
        (5002, '  File "a.py", line 1, in f'),
        (5003, "ValueError: bad"),
    ]


def test_a_large_log_keeps_facts_only_a_pip_line_states(tmp_path, small_limits):
    # the scanner looks for the fact extractors' own triggers: no second list to drift
    log = tmp_path / "big.log"
    big_log(
        log,
        b"Successfully installed torch==2.5.1 triton==3.1.0 vllm==0.6.3\n"
        b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
    doc = parse_path(str(log))
    assert not doc.full_parse
    facts = {name: f.value for name, f in doc.fact_map().items()}
    assert (facts.get("torch_version"), facts.get("triton_version")) == ("2.5.1", "3.1.0")


def test_every_scanned_fact_trigger_is_found_by_the_scanner():
    from tracelens.facts import EXTRACTORS

    for ex in EXTRACTORS:
        if ex.scan:
            assert scan.SCANSET.triggers.search(ex.trigger.encode()), ex.trigger
