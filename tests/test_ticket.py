"""Tickets a maintainer wants: the excerpt is the originating failure as its own process printed
it, in order, with no banner, no other worker's lines and no incident bookkeeping; a GitHub link
keeps the environment and a trimmed excerpt cut at line boundaries, fits GitHub's URL limit and
points at nothing on the user's machine."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.incidents.incident import excerpt, live_ticket, save
from tracelens.incidents.records import Excerpt, ExcerptLine, is_banner
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import Store
from tracelens.incidents.ticket import (
    GITHUB_URL_LIMIT,
    excerpt_text,
    failure_lines,
    github_url,
    render_ticket,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"

# (log, the process that failed first, text of its failure's last line)
FAILURES = [
    (
        "incidents/the-fp8-kv-cache-wall.log",  # vLLM TP8: eight workers' tracebacks interleaved
        "Worker_TP7 pid=48537",
        "ValueError: No valid attention backend found",
    ),
    (
        "incidents/heldout-r7-01-vllm-tp8-llama4-weight-load-oom.log",
        "VllmWorker rank=5 pid=50995",
        "torch.OutOfMemoryError: CUDA out of memory",
    ),
    (
        "incidents/kubectl-vllm-0.9-tp2-nvfp4-on-hopper-min-capability.log",
        "pod/vllm-nvfp4-0/vllm / VllmWorker rank=1 pid=302",
        "The quantization method modelopt_fp4 is not supported",
    ),
    (
        "shapes/torchrun-fanout-interleaved.log",  # torchrun: four ranks' lines interleaved
        "rank2",
        "ValueError: sample length 4133 exceeds max_len 4096",
    ),
    (
        "incidents/torchrun-8gpu-fsdp-oom-rank3-sigterm-others.log",
        "rank3",
        "torch.OutOfMemoryError: CUDA out of memory",
    ),
    (
        "incidents/docker-compose-torchrun-ddp-nccl-shm-no-space.log",
        "trainer-1 / rank2",
        "No space left on device",
    ),
    (
        "incidents/sglang-0.5-fp8-moe-on-ampere-triton-fp8e4nv.log",  # SGLang: untagged lines
        "TP0",  # continue the tagged "Scheduler hit an exception" line
        "Open an issue on GitHub",
    ),
]
IDS = [Path(name).stem[:40] for name, _, _ in FAILURES]
BOOKKEEPING = ("time(s)", "status open", "Incident #", "seen 1", "first seen")


@cache
def _live(name: str):
    """The log's report, diagnosed once for all the tests that read it (none changes it)."""
    return diagnose((CORPUS / name).read_bytes(), source=name)


@pytest.mark.parametrize("name,process,last", FAILURES, ids=IDS)
def test_the_excerpt_is_one_process_in_order(name, process, last):
    rep = _live(name)
    lines = failure_lines(excerpt(rep, Redactor()))
    assert lines, "no failure lines"
    assert {ln.process for ln in lines} <= {process, ""}  # untagged: its message continued
    assert lines[0].process == process
    numbers = [ln.line for ln in lines]
    assert numbers == sorted(set(numbers))
    records = {(r.line, r.stream): r.text for r in rep.document.records}
    assert all(records[(ln.line, ln.process)] == ln.text for ln in lines)  # the log's own lines
    assert any(last in ln.text for ln in lines[-12:])


@pytest.mark.parametrize("name,process,last", FAILURES, ids=IDS)
def test_the_excerpt_has_no_banner_and_no_other_worker(name, process, last):
    rep = _live(name)
    lines = failure_lines(excerpt(rep, Redactor()))
    assert not any(is_banner(ln.text) for ln in lines)
    others = {r.stream for r in rep.document.records} - {process, ""}
    assert not any(ln.process in others for ln in lines)


@pytest.mark.parametrize("fmt", ["markdown", "jira", "json", "github-url"])
@pytest.mark.parametrize("name", [f[0] for f in FAILURES[:4]], ids=IDS[:4])
def test_a_ticket_carries_no_bookkeeping_or_banner(tmp_path, name, fmt):
    store = Store(tmp_path / "i.db")
    rec = save(store, _live(name), Redactor(), name)
    assert rec is not None
    out = tmp_path / "t.txt"
    assert main(["ticket", str(rec.incident_id), "--db", str(tmp_path / "i.db"), "--format", fmt,
                 "--repo", "vllm-project/vllm", "-o", str(out)]) == 0  # fmt: skip
    text = out.read_text()
    for word in BOOKKEEPING:
        assert word not in text
    assert "█" not in text and "%E2%96%88" not in text  # the banner, plain or in a URL


@pytest.mark.parametrize("fmt", ["markdown", "jira", "github-url"])
@pytest.mark.parametrize("name", [f[0] for f in FAILURES[:3]], ids=IDS[:3])
def test_a_stored_incident_gives_the_ticket_of_its_log(tmp_path, name, fmt, capsys):
    """``ticket ID`` renders from the report and excerpt loaded back from the store: the same
    ticket as ``ticket FILE``."""
    db = tmp_path / "i.db"
    log = CORPUS / name
    assert main(["diagnose", "--save", "--db", str(db), str(log)]) in (0, 1)
    capsys.readouterr()
    repo = ["--repo", "vllm-project/vllm"]
    assert main(["ticket", str(log), "--format", fmt, *repo]) == 0
    from_log = capsys.readouterr().out
    assert main(["ticket", "1", "--db", str(db), "--format", fmt, *repo]) == 0
    assert capsys.readouterr().out == from_log


def _url_body(url: str) -> str:
    return parse_qs(urlsplit(url).query)["body"][0]


@pytest.mark.parametrize("name,process,last", FAILURES, ids=IDS)
def test_a_github_link_keeps_the_environment_and_fits(name, process, last):
    rep = _live(name)
    made = live_ticket(rep, Redactor())
    url = github_url("vllm-project/vllm", made.report, made.excerpt)
    assert len(url) <= GITHUB_URL_LIMIT
    body = _url_body(url)
    assert "tracelens locally" not in body and name not in body
    for fact in ("vllm_version", "torch_version", "gpu_name", "cuda_version"):
        if fact in rep.facts:
            assert f"| {fact} |" in body.replace("\\_", "_")
    assert "/home/" not in body and "/Users/" not in body  # nothing of the user's machine


@pytest.mark.parametrize("name,process,last", FAILURES, ids=IDS)
def test_a_github_link_cuts_the_excerpt_at_whole_lines(name, process, last):
    made = live_ticket(_live(name), Redactor())
    padded = Excerpt(  # the failure, and a long run of wordy lines before it
        lines=[
            ExcerptLine(line=k, text=f"step {k}: " + "word " * 40, process=process, origin=True)
            for k in range(1, 300)
        ]
        + [
            ExcerptLine(line=1000 + ln.line, text=ln.text, process=ln.process, origin=True)
            for ln in made.excerpt.origin_lines()
        ]
    )
    body = _url_body(github_url("o/r", made.report, padded))
    fence = body.split("```text\n", 1)[1].split("\n```", 1)[0] if "```text\n" in body else ""
    shown = set(excerpt_text(padded, public=True).splitlines()) | {"..."}
    assert all(line in shown for line in fence.splitlines())  # never a line cut short
    if fence:
        assert fence.splitlines()[-1] == excerpt_text(padded, public=True).splitlines()[-1]


@pytest.mark.parametrize(
    "title,expected",
    [
        ("CUDA out of memory", "CUDA out of memory"),
        ("word " * 100, ("word " * 39).strip() + "…"),
        ("x" * 300, "x" * 199 + "…"),  # one word longer than a title: nothing else to cut at
    ],
)
def test_a_github_title_is_cut_between_words(title, expected):
    rep = _live(FAILURES[0][0])
    rep.diagnoses[0].title = title
    url = github_url("o/r", rep, Excerpt())
    assert parse_qs(urlsplit(url).query)["title"][0] == expected


def test_the_url_limit_holds_for_a_huge_excerpt():
    rep = _live(FAILURES[0][0])
    huge = Excerpt(lines=[ExcerptLine(line=k, text="é" * 3000, origin=True) for k in range(1, 400)])
    url = render_ticket("github-url", rep, huge, repo="vllm-project/vllm")
    assert len(url) <= GITHUB_URL_LIMIT and "Root cause" in _url_body(url)
