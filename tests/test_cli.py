"""The command line: exit codes, stdin, one-line errors, the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_imports import _python

from tracelens.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
HEALTHY = sorted((ROOT / "corpus" / "healthy").glob("*.log"))


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``tracelens ARGS`` as a process: for what only a process shows (its exit status, a
    pipe on stdin or stdout)."""
    return subprocess.run(
        [sys.executable, "-m", "tracelens", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )


def invoke(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """``tracelens ARGS`` in this process (click's CliRunner streams, stdin not a terminal),
    with what ``run`` gives: the code main() returns, stdout and stderr as bytes."""
    with CliRunner().isolation(input=stdin) as (out, err, _):
        code = main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_diagnose_json_contract():
    p = invoke("diagnose", str(SEED), "--format", "json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert isinstance(data["diagnoses"], list) and data["diagnoses"]
    d = data["diagnoses"][0]
    for key in (
        "rule_id",
        "title",
        "category",
        "severity",
        "confidence",
        "root_cause",
        "remedies",
        "does_not_help",
        "evidence",
        "references",
    ):
        assert key in d, key
    assert {"title", "steps", "commands"} <= set(d["remedies"][0])
    assert {"line", "text"} <= set(d["evidence"][0])


def test_diagnose_stdin_same_as_file():
    a = invoke("diagnose", str(SEED), "--format", "json")
    b = run("diagnose", "-", "--format", "json", stdin=SEED.read_bytes())  # a real pipe
    # commands name the log that was read; from a pipe there is no file name to name
    da = json.loads(a.stdout.decode().replace(str(SEED), "crash.log"))
    db = json.loads(b.stdout)
    assert da["diagnoses"] == db["diagnoses"]


@pytest.mark.parametrize("log", HEALTHY[:2], ids=[p.name for p in HEALTHY[:2]])
def test_healthy_log_gives_empty_diagnoses(log):
    p = invoke("diagnose", str(log), "--format", "json")
    assert p.returncode == 0
    assert json.loads(p.stdout)["diagnoses"] == []
    text = invoke("diagnose", str(log))
    assert b"Nothing is wrong" in text.stdout or b"No known failure" in text.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (("diagnose", "/nonexistent/crash.log"), b"no such file"),
        (("diagnose", "corpus"), b"is a directory"),
        (("diagnose", "--format", "yaml", "x.log"), b"Invalid value"),
        (("explain", "no/such-rule"), b"no rule"),
        (
            ("diagnose", "--rules", "/nonexistent-rules-dir", str(SEED)),
            b"rules directory not found",
        ),
    ],
)
def test_usage_and_input_errors_exit_2_with_one_line(args, needle):
    p = invoke(*args)
    assert p.returncode == 2
    assert needle in p.stderr
    assert b"Traceback" not in p.stderr


def test_empty_input_is_healthy():
    p = invoke("diagnose", "-", "--format", "json", stdin=b"")
    assert p.returncode == 0
    assert json.loads(p.stdout)["diagnoses"] == []


@pytest.mark.parametrize("level,code", [("fatal", 1), ("warning", 1)])
def test_fail_on(level, code):
    assert run("diagnose", str(SEED), "--fail-on", level).returncode == code


def test_the_process_writes_all_its_output_before_it_ends():
    out = run("diagnose", str(SEED), "--format", "json")
    assert out.returncode == 0 and out.stderr == b""
    assert (
        json.loads(out.stdout)["diagnoses"][0]["rule_id"] == "vllm/attention/mla-fp8-kv-unsupported"
    )


def test_a_reader_that_stops_early_is_no_error():
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracelens", "diagnose", str(SEED), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(16)  # like `| head -c 16`
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert b"Traceback" not in err and b"Exception ignored" not in err


def test_fail_on_healthy_exits_0():
    assert invoke("diagnose", str(HEALTHY[0]), "--fail-on", "warning").returncode == 0


@pytest.mark.parametrize(
    "fmt,needle", [("markdown", "### 1."), ("jira", "h3. 1."), ("text", "[1]")]
)
def test_other_formats(fmt, needle, capsys):
    assert main(["diagnose", str(SEED), "--format", fmt]) == 0
    assert needle in capsys.readouterr().out


def test_parse_json_has_diagnoses_key(capsys):
    assert main(["parse", str(SEED), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["diagnoses"] == [] and data["tracebacks"]


def test_rules_list_and_show(capsys):
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert "vllm/attention/mla-fp8-kv-unsupported" in out
    assert main(["rules", "show", "vllm/attention/mla-fp8-kv-unsupported"]) == 0
    assert "root_cause" in capsys.readouterr().out
    assert main(["explain", "vllm/attention/mla-fp8-kv-unsupported"]) == 0
    assert "What to do" in capsys.readouterr().out


def test_broken_rule_is_one_line_naming_file_line_field(tmp_path, capsys):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "bad.yaml").write_text(
        "id: bad\ntitle: t\ncategory: gpu-oom\nseverity: catastrophic\nmatch:\n  all:\n    - line: 'x'\n"
        "root_cause: r\nremedies: [{title: a}]\nreferences: [https://example.org]\n"
    )
    assert main(["diagnose", "--rules", str(d), str(SEED)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "bad.yaml:4" in err and "severity" in err


def test_rules_lint_reports_every_problem(tmp_path, capsys):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "a.yaml").write_text("id: a\n")
    (d / "b.yaml").write_text(
        "id: b\ntitle: t\ncategory: nope\nseverity: fatal\nmatch: {all: [{line: 'x'}]}\n"
        "root_cause: r\nremedies: [{title: a}]\nreferences: [https://example.org]\n"
    )
    (d / "c.yaml").write_text(
        "id: c\ntitle: t\ncategory: gpu-oom\nseverity: fatal\nmatch: {all: [{line: '(?=x)'}]}\n"
        "root_cause: r\nremedies: [{title: a}]\nreferences: [https://example.org]\n"
    )
    assert main(["rules", "lint", str(d)]) == 1
    out = capsys.readouterr().out
    assert "a.yaml" in out and "b.yaml:3: category" in out and "c.yaml" in out and "RE2" in out


def test_no_args_on_a_terminal_is_a_usage_error():
    # stdin is not a tty under pytest: '-' is read and is empty, which is healthy
    p = invoke("diagnose", stdin=b"")
    assert p.returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ("incidents", "show", "abc"),
        ("nosuchcommand",),
        ("diagnose", "--no-such-option", str(SEED)),
        ("ticket",),
    ],
)
def test_usage_errors_are_one_line(args):
    p = invoke(*args)
    assert p.returncode == 2
    assert len(p.stderr.decode().strip().splitlines()) == 1, p.stderr


@pytest.mark.parametrize("args", [[], ["rules"], ["incidents"]])
def test_a_command_group_given_nothing_shows_its_help(args, capsys):
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Usage: tracelens") and "Commands:" in out and err == ""


_IMPORTS_OF_A_RUN = (
    "import io, sys, contextlib; from tracelens.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
    "print(code, ' '.join(sorted(m for m in sys.modules if '.' not in m or "
    "m.startswith('tracelens.cli'))))"
)


@pytest.mark.parametrize(
    ("argv", "imported", "not_imported"),
    [
        (
            ["diagnose", str(SEED)],
            {"tracelens.cli.diagnose", "re2"},
            {
                "tracelens.cli.incidents",
                "tracelens.cli.ingest",
                "tracelens.cli.top",
                "tracelens.cli.rules",
                "pydantic",
                "sqlite_utils",
                "textual",
                "lark",
                "rapidfuzz",
                "typing_extensions",  # typing has dataclass_transform from Python 3.11
                "shutil",  # only to fit a terminal's width
                "json",  # only for a log of JSON lines
            },
        ),
        pytest.param(  # two runs in a process of their own each: the others are --full's
            ["explain", "vllm/attention/mla-fp8-kv-unsupported"],
            {"tracelens.cli.diagnose"},
            {"tracelens.cli.incidents", "tracelens.cli.ingest", "textual", "sqlite_utils"},
            marks=pytest.mark.slow,
        ),
        pytest.param(
            ["rules", "list"],
            {"tracelens.cli.rules"},
            {"tracelens.cli.diagnose", "tracelens.cli.incidents", "textual"},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_command_imports_its_own_module_only(argv, imported, not_imported, tmp_path):
    import os

    # the user's rule-index cache (a first run builds it, with pydantic: then the second run)
    env = {**os.environ, "TRACELENS_DB": str(tmp_path / "none.db")}
    for _ in range(2):
        out = _python(_IMPORTS_OF_A_RUN, *argv, env=env)
    code, *modules = out.stdout.split()
    assert code == "0", out.stderr
    assert imported <= set(modules)
    assert not (not_imported & set(modules))


OOM_LOG = ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log"
WATCHDOG = sorted((ROOT / "corpus" / "incidents").glob("*watchdog*timeout*.log"))[0]


def test_several_logs_are_each_diagnosed_after_a_summary_failures_first():
    res = invoke("diagnose", str(HEALTHY[0]), str(OOM_LOG))
    assert res.returncode == 0
    out = res.stdout.decode()
    head = out.splitlines()[:3]
    assert head[0].startswith("tracelens: 2 logs; start with") and str(OOM_LOG) in head[0]
    assert head[1].strip().startswith(f"{OOM_LOG}: failed: GPU out of memory")
    assert head[2].strip() == f"{HEALTHY[0]}: healthy"
    # then each log's own report, the failing one first
    assert out.index(f"tracelens: {OOM_LOG}: ") < out.index(f"tracelens: {HEALTHY[0]}: ")


def test_several_logs_in_json_are_a_list_of_reports_in_the_same_order():
    res = invoke("diagnose", "--format", "json", str(HEALTHY[0]), str(WATCHDOG), str(OOM_LOG))
    data = json.loads(res.stdout)
    assert isinstance(data, list) and len(data) == 3
    assert [d["source"] for d in data][-1] == str(HEALTHY[0])
    assert all({"verdict", "diagnoses", "facts"} <= set(d) for d in data)


def test_several_logs_gate_on_any_and_name_an_unreadable_one_then_exit_2(tmp_path):
    assert invoke("diagnose", "--fail-on", "error", str(HEALTHY[0]), str(OOM_LOG)).returncode == 1
    assert (
        invoke("diagnose", "--fail-on", "error", str(HEALTHY[0]), str(HEALTHY[1])).returncode == 0
    )
    missing = tmp_path / "rank3.log"
    res = invoke("diagnose", str(OOM_LOG), str(missing))
    assert res.returncode == 2
    assert res.stderr.decode().strip() == f"tracelens: {missing}: no such file"
    assert f"tracelens: {OOM_LOG}: " in res.stdout.decode()


def test_stdin_is_read_once_among_several_logs():
    res = invoke("diagnose", "-", "-")
    assert res.returncode == 2 and "stdin ('-') can be read only once" in res.stderr.decode()


def test_the_summary_of_several_logs_keeps_control_characters_off_the_terminal(tmp_path):
    hostile = tmp_path / "rank9.log"
    hostile.write_bytes(
        b"Traceback (most recent call last):\n"
        b'  File "/srv/app/w.py", line 3, in <module>\n'
        b"    run()\n"
        b"RuntimeError: jammed \x1b]0;retitled\x07 \x1b[2J at stage 3\n"
    )
    res = invoke("diagnose", str(hostile), str(HEALTHY[0]))
    out = res.stdout.decode()
    assert "jammed" in out.splitlines()[1] and "\x1b" not in out and "\x07" not in out
