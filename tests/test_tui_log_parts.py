"""The parts of the TUI's log reader and traceback tab: the lines' levels and gap markers, short
process names, and the rank labels of a traceback that several processes printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracelens.engine import diagnose, parse
from tracelens.models import Record
from tracelens.parse import document
from tracelens.tui.loglines import build_lines, short_process
from tracelens.tui.screens.tracebacks import ranks

RANKS = (
    Path(__file__).resolve().parent.parent
    / "corpus"
    / "incidents"
    / "docker-compose-torchrun-ddp-nccl-shm-no-space.log"
)


@pytest.mark.parametrize(
    ("records", "levels"),
    [
        # a line without a level inherits its process's last one
        ([("a", "ERROR"), ("b", None), ("a", None), ("b", "INFO")], [3, 1, 3, 1]),
        ([("", "WARNING"), ("", None), ("", "DEBUG"), ("", None)], [2, 2, 0, 0]),
        ([("", None)], [1]),
    ],
    ids=["per-process", "inherited", "none"],
)
def test_levels_of_lines(records, levels):
    recs = [Record(line=k + 1, text="x", stream=s, level=lv) for k, (s, lv) in enumerate(records)]
    assert [ln.level for ln in build_lines(recs)] == levels


def test_traceback_lines_are_errors_and_gaps_are_marked():
    rep = diagnose(RANKS.read_bytes())
    doc = rep.document
    records = [r for r in doc.records if r.line != 5]
    lines = build_lines(records, (), doc.tracebacks, doc.errors, doc.line_count + 3)
    assert all(ln.level >= 3 for ln in lines if 9 <= ln.number <= 23)
    gaps = [ln.text for ln in lines if not ln.number]
    assert gaps == [
        "… lines 5-5 are not kept",
        f"… lines {doc.line_count + 1}-{doc.line_count + 3} are not kept",
    ]


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("Worker_TP7 pid=48537", "Worker_TP7"),
        ("trainer-1 / rank2", "rank2"),
        ("EngineCore_DP0 pid=245", "EngineCore_DP0"),
        ("WorkerDict pid=1, ip=10.0.0.1", "WorkerDict"),
        ("a-very-long-process-name", "a-very-long-p…"),
    ],
)
def test_short_process_names(name, short):
    assert short_process(name) == short


@pytest.mark.parametrize(
    ("streams", "label"),
    [
        (["trainer-1 / rank2", "trainer-1 / rank0", "trainer-1 / rank1"], "ranks 0-2"),
        (["[rank0]", "[rank1]", "[rank3]"], "ranks 0-1, 3"),
        (["Worker_TP7 pid=1", "Worker_TP0 pid=2", "Worker_TP1 pid=3"], "TP ranks 0-1, 7"),
        (["rank0", "Worker_TP1 pid=2"], "rank0, Worker_TP1 pid=2"),
        (["only one"], "only one"),
        ([""], ""),
    ],
)
def test_rank_labels(streams, label):
    assert ranks(streams) == label


def test_the_tab_labels_the_ranks_the_parser_folded():
    """The tab folds nothing itself: the four ranks' copies arrive folded from the parser."""
    doc = diagnose(RANKS.read_bytes()).document
    assert [len(tb.lines) for tb in doc.tracebacks] == [4, 1]
    assert doc.tracebacks[0].lines == [9, 25, 41, 57]
    assert ranks(doc.tracebacks[0].streams) == "ranks 0-3"


@pytest.mark.parametrize(
    "log",
    [
        "docker-compose-torchrun-ddp-nccl-shm-no-space.log",  # four copies one after another
        "the-fp8-kv-cache-wall.log",  # eight copies interleaved line by line
        "heldout-r9-10-docker-torchrun-4x5090-nccl-shm-segment-no-space.log",
    ],
)
def test_every_copy_of_a_folded_traceback_reads_as_error_lines(log, monkeypatch):
    """The parser keeps one copy and where the others start: the reader still raises every
    copy's lines to error, as if each copy were a traceback of its own."""
    data = (RANKS.parent / log).read_bytes()
    doc = parse(data)
    assert any(len(tb.lines) > 1 for tb in doc.tracebacks)
    folded = build_lines(doc.records, (), doc.tracebacks, doc.errors, doc.line_count)
    monkeypatch.setattr(document, "fold", lambda tracebacks: list(tracebacks))
    each = parse(data)
    apart = build_lines(each.records, (), each.tracebacks, each.errors, each.line_count)
    assert [(ln.number, ln.level) for ln in folded] == [(ln.number, ln.level) for ln in apart]
