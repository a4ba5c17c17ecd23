"""The report: verdicts, --fail-on on every kind of log, the compact and full text report,
text that is safe for a terminal, and an unrecognized failure named with a path forward."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.render.text import render_text

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
UNRECOGNIZED = sorted((ROOT / "corpus" / "unrecognized").glob("*.log"))[0]
HEALTHY = sorted((ROOT / "corpus" / "healthy").glob("*.log"))[0]

NOVEL = b"""INFO 01-20 13:03:50 [core.py:1] starting
Traceback (most recent call last):
  File "/srv/app/worker.py", line 12, in <module>
    run()
  File "/srv/app/worker.py", line 9, in run
    raise RuntimeError("frobnicator jammed at stage 3")
RuntimeError: frobnicator jammed at stage 3
"""


@pytest.mark.parametrize(
    "log,verdict,unrecognized",
    [(SEED, "failed", False), (UNRECOGNIZED, "failed", True), (HEALTHY, "healthy", False)],
    ids=["seed", "unrecognized", "healthy"],
)
def test_json_verdict(log, verdict, unrecognized, capsys):
    assert main(["diagnose", str(log), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == verdict and data["unrecognized"] is unrecognized


@pytest.mark.parametrize("content", [b"", b"\n  \n\t\n"], ids=["no-bytes", "blank-lines"])
@pytest.mark.parametrize("fmt", ["text", "markdown", "jira", "json"])
def test_an_empty_log_is_said_to_be_empty_not_healthy(tmp_path, capsys, content, fmt):
    log = tmp_path / "job.log"
    log.write_bytes(content)
    assert main(["diagnose", str(log), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)["verdict"] == "empty"
    else:
        assert "The log is empty" in out and "Nothing is wrong" not in out


@pytest.mark.parametrize(
    "log,level,code",
    [
        (SEED, "error", 1),
        (UNRECOGNIZED, "error", 1),
        (UNRECOGNIZED, "fatal", 0),
        (HEALTHY, "warning", 0),
    ],
    ids=["seed-error", "unrecognized-error", "unrecognized-fatal", "healthy-warning"],
)
def test_fail_on_trips_on_unrecognized_failures(log, level, code, capsys):
    assert main(["diagnose", str(log), "--fail-on", level]) == code


def test_a_log_ending_in_an_uncaught_exception_is_never_healthy(tmp_path, capsys):
    log = tmp_path / "job.log"
    log.write_bytes(NOVEL)
    assert main(["diagnose", str(log), "--fail-on", "error"]) == 1
    out = capsys.readouterr().out
    assert "Nothing is wrong" not in out and "Unrecognized failure" in out


def test_unrecognized_names_the_line_frame_and_the_real_log_file(tmp_path):
    log = tmp_path / "job-17.log"
    log.write_bytes(NOVEL)
    rep = diagnose(NOVEL, source=str(log))
    first = rep.diagnoses[0]
    assert first.rule_id == "unrecognized" and first.severity == "error"
    assert "line 7" in first.root_cause and "raised in run" in first.root_cause
    assert [e.line for e in first.evidence] == [5, 7]
    commands = [c for r in first.remedies for c in r.commands]
    assert any(str(log) in c for c in commands) and not any("vllm.log" in c for c in commands)
    assert any(c.startswith("https://github.com/search?") for c in commands)


def test_the_tracker_search_for_a_bare_assertion_names_where_it_was_raised():
    log = (
        b"Traceback (most recent call last):\n"
        b'  File "/opt/venv/lib/python3.12/site-packages/vllm/distributed/eplb/eplb_state.py", line 300, in eplb_step\n'
        b"    assert is_mixture_of_experts(model)\n"
        b"AssertionError\n"
    )
    first = diagnose(log, source="job.log").diagnoses[0]
    search = next(c for r in first.remedies for c in r.commands if "github.com/search" in c)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(search).query)["q"][0]
    assert (
        query
        == "AssertionError eplb_step assert is_mixture_of_experts(model) is:issue repo:vllm-project/vllm"
    )


def test_compact_report_shows_the_first_diagnosis_and_one_line_for_the_rest():
    rep = diagnose(SEED.read_bytes(), source=str(SEED))
    compact, full = render_text(rep), render_text(rep, full=True)
    assert len(rep.diagnoses) >= 2
    assert compact.count("Root cause:") == 1 and full.count("Root cause:") == len(rep.diagnoses)
    assert "--full" in compact and "--full shows" not in full
    first = rep.diagnoses[0]
    assert (
        all(r in full for r in first.references)
        and sum(r in compact for r in first.references) <= 3
    )


def test_prose_wraps_to_the_width_and_commands_do_not():
    rep = diagnose(SEED.read_bytes(), source=str(SEED))
    text = render_text(rep, width=80)
    prose = [
        ln
        for ln in text.splitlines()
        if ln.strip() and not ln.lstrip().startswith(("$", "line ", "http", "tracelens:"))
    ]
    assert prose and all(len(ln) <= 80 or " " not in ln.strip() for ln in prose)
    assert any(len(ln) > 80 for ln in text.splitlines() if ln.lstrip().startswith("$"))


@pytest.mark.parametrize("char", ["\x1b", "\x9b", "\x9d", "\x07", "\x08"])
def test_control_characters_from_the_log_never_reach_the_terminal(char):
    data = NOVEL.replace(b"frobnicator", f"frob{char}]0;pwned{char}nicator".encode())
    text = render_text(diagnose(data), full=True)
    assert char not in text


def test_facts_come_from_the_run_that_failed():
    first = (
        "INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
        "INFO 01-20 13:00:01 [core.py:76] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='/models/old', tensor_parallel_size=2\n"
        'INFO:     10.0.0.2:5000 - "POST /v1/completions HTTP/1.1" 200 OK\n'
    )
    second = (
        "INFO 01-21 09:00:00 [api_server.py:1] vLLM API server version 0.16.0\n"
        "INFO 01-21 09:00:01 [core.py:76] Initializing a V1 LLM engine (v0.16.0) with config: "
        "model='/models/new', tensor_parallel_size=4\n"
    )
    rep = diagnose((first + second).encode() + NOVEL)
    assert rep.diagnoses[0].rule_id == "unrecognized"
    assert rep.facts["vllm_version"] == "0.16.0" and rep.facts["tensor_parallel_size"] == "4"
    # one run only: the earliest, highest-priority statement as before
    assert diagnose(first.encode() + NOVEL).facts["vllm_version"] == "0.11.0"


SHUTDOWN_NOISE = b"""Processed prompts: 100%|##########| 500/500 [00:50<00:00, 9.80it/s]
wrote 500 generations to out/gen.jsonl
Exception in thread Thread-2:
Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stderr>'> at interpreter shutdown, possibly due to daemon threads
Python runtime state: finalizing (tstate=0x00000000009c89d0)

Current thread 0x00007faec6b2c740 (most recent call first):
  <no Python frame>
"""


def test_the_interpreter_complaining_at_shutdown_is_not_a_failure():
    rep = diagnose(SHUTDOWN_NOISE)
    assert rep.verdict != "failed", [(d.rule_id, d.severity) for d in rep.diagnoses]


def test_workers_stopped_with_sigterm_after_a_finished_run_are_not_a_failure():
    log = b"""Processed prompts: 100%|##########| 500/500 [00:50<00:00, 9.80it/s]
ERROR 06-14 11:05:01 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 90212 died, exit code: -15
INFO 06-14 11:05:01 multiproc_worker_utils.py:123] Killing local vLLM worker processes
"""
    assert diagnose(log).verdict != "failed"


@pytest.mark.parametrize("fmt", ["markdown", "jira"])
def test_markdown_and_jira_name_the_log_once(fmt, capsys):
    assert main(["diagnose", str(SEED), "--format", fmt]) == 0
    head = capsys.readouterr().out.splitlines()[:4]
    assert sum("wall.log" in line for line in head) == 1, head
