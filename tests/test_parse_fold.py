"""One definition of "the same traceback": the per-process copies of one failure fold into one
traceback (every process and every copy listed), different failures stay apart, and the folded
traceback is the first copy as printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracelens.engine import diagnose, parse, parse_path
from tracelens.models import ExceptionInfo, Frame, Segment, Traceback
from tracelens.parse import document
from tracelens.parse.fold import fold, fold_key

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

TEMPLATE = """\
Traceback (most recent call last):
  File "/workspace/train.py", line {lineno}, in {function}
    model = DDP(model, device_ids=[local_rank])
  File "/usr/lib/python3/site-packages/torch/distributed/utils.py", line 288, in verify
    return dist._verify_params_across_processes(process_group, tensors, logger)
{type}: {message}
"""


def printed(rank: int, **fields: object) -> str:
    """One rank's copy of a traceback, every line under its ``[rankN]:`` prefix."""
    values = {
        "lineno": 121,
        "function": "main",
        "type": "torch.distributed.DistBackendError",
        "message": "NCCL error",
    }
    values.update(fields)
    return "".join(f"[rank{rank}]: {line}\n" for line in TEMPLATE.format(**values).splitlines())


SAME = "must fold"
DIFFERENT = "must not fold"

CASES = {
    # per-rank copies of one failure: what differs is what each process puts in its message
    "device ids": (
        [{"message": "CUDA error on device 0"}, {"message": "CUDA error on device 5"}],
        SAME,
    ),
    "rank numbers": (
        [
            {"message": "Rank 0 is running collective ALLREDUCE, but Rank 1 is running BARRIER"},
            {"message": "Rank 1 is running collective ALLREDUCE, but Rank 0 is running BARRIER"},
        ],
        SAME,
    ),
    "per-rank shared-memory segment": (
        [
            {"message": "Error while creating shared memory segment /dev/shm/nccl-Zp02Rw"},
            {"message": "Error while creating shared memory segment /dev/shm/nccl-Qm3xTb"},
        ],
        SAME,
    ),
    "pids and addresses": (
        [
            {"message": "worker pid 4155 died at 0x7f3a2b7fe640"},
            {"message": "worker pid 77 died at 0x55d0"},
        ],
        SAME,
    ),
    "sizes": (
        [
            {"message": "Tried to allocate 2.00 GiB. GPU 0 has 1.50 GiB free"},
            {"message": "Tried to allocate 512.00 MiB. GPU 3 has 100 MiB free"},
        ],
        SAME,
    ),
    "identical copies": ([{}, {}, {}], SAME),
    # different failures
    "another exception type": ([{}, {"type": "RuntimeError"}], DIFFERENT),
    "another message": (
        [
            {"message": "CUDA error: out of memory"},
            {"message": "CUDA error: illegal memory access"},
        ],
        DIFFERENT,
    ),
    "another line in the same function": ([{}, {"lineno": 122}], DIFFERENT),
    "another function": ([{}, {"function": "setup"}], DIFFERENT),
}


@pytest.mark.parametrize(("copies", "verdict"), CASES.values(), ids=list(CASES))
def test_per_rank_copies_fold_and_different_failures_do_not(copies, verdict):
    doc = parse("".join(printed(rank, **fields) for rank, fields in enumerate(copies)))
    if verdict == SAME:
        (tb,) = doc.tracebacks
        assert tb.streams == [f"rank{k}" for k in range(len(copies))]
        assert tb.lines == [1 + 6 * k for k in range(len(copies))]
    else:
        assert [(tb.streams, tb.lines) for tb in doc.tracebacks] == [
            ([f"rank{k}"], [1 + 6 * k]) for k in range(len(copies))
        ]


def _tb(stream: str, line: int, *, frames: int = 1, nested_lineno: int | None = None) -> Traceback:
    nested = []
    if nested_lineno is not None:
        inner = Segment(
            frames=[Frame(file="/srv/pool.py", lineno=nested_lineno, function="worker")],
            exception=ExceptionInfo(type="ValueError", message="bad"),
        )
        nested = [Traceback(segments=[inner])]
    seg = Segment(
        frames=[Frame(file="/srv/a.py", lineno=k + 1, function="f") for k in range(frames)],
        exception=ExceptionInfo(type="RemoteTraceback", message="worker failed", nested=nested),
    )
    return Traceback(segments=[seg], start_line=line, stream=stream)


@pytest.mark.parametrize(
    ("first", "second", "verdict"),
    [
        # a copy cut short by the person who pasted the log is another traceback
        (_tb("DP0 TP0", 1), _tb("DP3 TP3", 9, frames=3), DIFFERENT),
        # the traceback quoted in the message counts too: raised at another line of the worker
        (_tb("a", 1, nested_lineno=125), _tb("b", 9, nested_lineno=126), DIFFERENT),
        (_tb("a", 1, nested_lineno=125), _tb("b", 9, nested_lineno=125), SAME),
        # the same process printing the same traceback twice: one stream, two copies
        (_tb("a", 1), _tb("a", 9), SAME),
    ],
    ids=["abridged copy", "nested elsewhere", "nested the same", "one process twice"],
)
def test_fold_key_of_built_tracebacks(first, second, verdict):
    assert (fold_key(first) == fold_key(second)) is (verdict == SAME)
    assert len(fold([first, second])) == (1 if verdict == SAME else 2)


def test_a_folded_document_folds_again_into_the_same():
    """A stored document's tracebacks were folded when it was parsed: folding them again (or
    together with later copies) keeps every stream once and every copy's line."""
    copies = [_tb("rank0", 1), _tb("rank1", 9), _tb("rank0", 17)]
    (once,) = fold(copies)
    assert (once.streams, once.lines) == (["rank0", "rank1"], [1, 9, 17])
    (twice,) = fold([once, _tb("rank2", 25)])
    assert (twice.streams, twice.lines) == (["rank0", "rank1", "rank2"], [1, 9, 17, 25])


@pytest.mark.parametrize(
    ("log", "folded"),
    [
        # four ranks, each message naming its own /dev/shm segment; then torchrun's summary
        (
            "incidents/docker-compose-torchrun-ddp-nccl-shm-no-space.log",
            [
                (
                    [
                        "trainer-1 / rank2",
                        "trainer-1 / rank0",
                        "trainer-1 / rank3",
                        "trainer-1 / rank1",
                    ],
                    [9, 25, 41, 57],
                ),
                (["trainer-1"], [77]),
            ],
        ),
        (
            "incidents/heldout-r9-10-docker-torchrun-4x5090-nccl-shm-segment-no-space.log",
            [(["rank0", "rank1", "rank2", "rank3"], [60, 73, 86, 99]), ([""], [117])],
        ),
        # two ranks at two different collectives: two failures
        (
            "captured/gpu/nccl-collective-mismatch-detail.log",
            [(["rank1"], [14]), (["rank0"], [24]), ([""], [38])],
        ),
        # the same illegal memory access seen at different places by TP3 and TP5 (TP3's chained
        # traceback, below its bare message lines, is still TP3's)
        (
            "incidents/heldout-r8-15-sglang-044-dsr1-h200-capture-graph-illegal-access.log",
            [(["TP3"], [96]), (["TP5"], [160])],
        ),
    ],
    ids=["torchrun-shm", "torchrun-shm-heldout", "collective-mismatch", "sglang-tp3-tp5"],
)
def test_corpus_logs_fold_their_per_rank_copies_only(log, folded):
    doc = parse_path(str(CORPUS / log))
    assert [(tb.streams, tb.lines) for tb in doc.tracebacks] == folded


def test_the_evidence_quotes_the_first_copys_own_lines():
    log = CORPUS / "incidents/docker-compose-torchrun-ddp-nccl-shm-no-space.log"
    rep = diagnose(log.read_bytes())
    first = rep.document.tracebacks[0]
    assert (first.stream, first.start_line, first.end_line) == ("trainer-1 / rank2", 9, 23)
    top = rep.diagnoses[0]
    assert top.rule_id == "nccl/shm-segment-failed"
    lines = log.read_text().splitlines()
    # the exception line of rank 2's copy first, its message's last line naming rank 2's
    # segment (NCCL's own "Error while creating shared memory segment" lines may follow)
    assert top.evidence[0].line == 20
    assert "[rank2]: torch.distributed.DistBackendError" in lines[20 - 1]
    assert (
        "/dev/shm/nccl-Zp02Rw" in lines[23 - 1] and "/dev/shm/nccl-Zp02Rw" in top.evidence[0].text
    )


def _by_key(tracebacks: list[Traceback]) -> list[list[int]]:
    """Start lines grouped by :func:`fold_key`, the definition :func:`fold` must agree with."""
    groups: dict[tuple, list[int]] = {}
    for tb in tracebacks:
        groups.setdefault(fold_key(tb), []).append(tb.start_line)
    return list(groups.values())


def _msg(message: str, line: int) -> Traceback:
    seg = Segment(
        frames=[Frame(file="/srv/a.py", lineno=3, function="f")],
        exception=ExceptionInfo(type="RuntimeError", message=message),
    )
    return Traceback(segments=[seg], start_line=line, stream=f"p{line}")


@pytest.mark.parametrize(
    "messages",
    [
        ["GPU 0 failed", "GPU 1 failed", "GPU 0 failed", "disk full", "GPU 7 failed"],
        ["disk full", "GPU 0 failed", "disk full", "GPU 1 failed"],
        ["at /dev/shm/a1", "at 0x1f", "at /dev/shm/b2", "at 31", "at 0x2e"],
    ],
    ids=["repeats between copies", "a repeat before any copy", "hex, decimal and paths"],
)
def test_fold_groups_as_the_key_does(messages):
    tracebacks = [_msg(m, k + 1) for k, m in enumerate(messages)]
    expected = _by_key(tracebacks)
    assert [tb.lines for tb in fold(tracebacks)] == expected


@pytest.mark.parametrize(
    "log",
    [
        # the corpus logs with the most tracebacks before folding (11, 8 and 5)
        "incidents/the-fp8-kv-cache-wall.log",
        "incidents/kubectl-vllm-0.11-illegal-memory-access-engine-dead.log",
        "shapes/torchrun-fanout-interleaved.log",
        "incidents/heldout-r9-10-docker-torchrun-4x5090-nccl-shm-segment-no-space.log",
        "incidents/heldout-r8-01-vllm-085-qwen3moe-tp8-cudagraph-capture-oom.log",
        "unrecognized/vllm-0.9.1-tp8-eagle3-partial-prefill-get-token-id-indexerror.log",
    ],
)
def test_corpus_fold_groups_as_the_key_does(log, monkeypatch):
    monkeypatch.setattr(document, "fold", lambda tracebacks: list(tracebacks))
    tracebacks = parse_path(str(CORPUS / log)).tracebacks
    assert len(tracebacks) >= 5
    expected = _by_key(tracebacks)
    assert [tb.lines for tb in fold(tracebacks)] == expected


@pytest.mark.parametrize(
    "message",
    [
        "CUDA error on GPU 3",
        "NCCL error\nLast error:\n\nsegment /dev/shm/nccl-Zp02Rw (size 9637888)",
        "Tried to allocate 2\nGiB on GPU 0",  # a size whose unit starts the next line
        "Tried to allocate 2 \nGiB",
        "a\r\nb 0x7f3a\r\n",
        "\n  indented 12:30:01\n\n\n",
        "run-12ab34cd failed at 2026-12-01 10:00:00\nchatcmpl-9f8e7d6c",
    ],
    ids=[
        "one line",
        "blank line",
        "size across lines",
        "space then unit",
        "crlf",
        "indented",
        "ids",
    ],
)
def test_message_normalized_line_by_line_is_normalized_whole(message):
    from tracelens.parse.fold import _by_line
    from tracelens.parse.normalize import normalize

    cache: dict[str, str] = {}
    assert _by_line(message, cache) == normalize(message)
    assert _by_line(message, cache) == normalize(message)  # from the cache


@pytest.mark.parametrize(
    ("stored_unfolded", "lines"),
    [(True, [[9, 25, 41, 57], [77]]), (False, [[9, 25, 41, 57], [77]])],
    ids=["stored before the fold", "stored since"],
)
def test_a_stored_document_comes_back_folded(monkeypatch, stored_unfolded, lines):
    from tracelens.incidents.logdoc import tracebacks_of
    from tracelens.models import to_dict

    log = CORPUS / "incidents/docker-compose-torchrun-ddp-nccl-shm-no-space.log"
    if stored_unfolded:  # each copy its own traceback, as an older parser left them
        monkeypatch.setattr(document, "fold", lambda tracebacks: list(tracebacks))
    tracebacks = parse_path(str(log)).tracebacks
    assert len(tracebacks) == (5 if stored_unfolded else 2)
    data = {"document": {"tracebacks": to_dict(tracebacks)}}
    assert [tb.lines for tb in tracebacks_of(data)] == lines
