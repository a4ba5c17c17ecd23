"""What a ``tracelens diagnose`` of a crash log leaves undone: regex tables compiled on first
use stay unbuilt when the log does not need them, and a rule's regexes are compiled when a
condition first searches with them (each costs 0.1 ms to a few ms of a run that takes ~150).
The tables are built once per process, so each log runs in a fresh one. The modules a run does
not import are in ``tests/test_cli.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
UNRECOGNIZED = (
    ROOT
    / "corpus"
    / "unrecognized"
    / "h200-torch-2.11-scaled-mm-fp8-row-major-mat2-cublaslt-layout.log"
)
KILLED = ROOT / "corpus" / "incidents" / "messy-slurm-srun-label-dataloader-worker-oom-killed.log"
TABLES = (
    "tracelens.read.failures:_shape_regex",
    "tracelens.rulebook.guess:_by_type",
    "tracelens.rulebook.guess:_by_words",
    "tracelens.parse.normalize:_normalizers",
)


def _python(code: str, *args: str, env: dict[str, str] | None = None):
    """``python -c code args...`` in a fresh process at the repository root: its output."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )


_BUILT_AFTER_A_RUN = (
    "import contextlib, importlib, io, json, sys\n"
    "from tracelens.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()): code = main(['diagnose', sys.argv[1]])\n"
    "built = {}\n"
    "for table in sys.argv[2:]:\n"
    "    module, name = table.split(':')\n"
    "    built[table] = getattr(importlib.import_module(module), name).cache_info().currsize\n"
    "for module in ('tracelens.rulebook.nearest',):\n"
    "    built[module] = int(module in sys.modules)\n"
    "print(json.dumps({'code': code, 'built': built}))"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """How many entries of each table a diagnose of ``log`` built, in a fresh process (for a
    module: 1 when it was imported)."""
    env = {**os.environ, "TRACELENS_DB": str(tmp_path_factory.mktemp("db") / "none.db")}
    seen: dict[Path, dict[str, int]] = {}

    def run(log: Path) -> dict[str, int]:
        if log not in seen:
            # (building the user's rule index builds none of them)
            out = _python(_BUILT_AFTER_A_RUN, str(log), *TABLES, env=env)
            result = json.loads(out.stdout)
            assert result["code"] == 0, out.stderr
            seen[log] = result["built"]
        return seen[log]

    return run


@pytest.mark.parametrize(
    ("log", "table", "expected"),
    [
        # a failure a rule knows, raised as an exception: no failure line to name, no
        # category to guess, no message to normalize
        (SEED, "tracelens.read.failures:_shape_regex", False),
        (SEED, "tracelens.rulebook.guess:_by_type", False),
        (SEED, "tracelens.rulebook.guess:_by_words", False),
        (SEED, "tracelens.parse.normalize:_normalizers", False),
        (SEED, "tracelens.rulebook.nearest", False),  # the module, not imported
        # a failure line (the OOM killer's): the shapes up to the one it matches
        (KILLED, "tracelens.read.failures:_shape_regex", True),
        # a failure no rule knows: its category guessed from its type, the nearest known
        # failures found by its normalized message
        (UNRECOGNIZED, "tracelens.rulebook.guess:_by_type", True),
        (UNRECOGNIZED, "tracelens.parse.normalize:_normalizers", True),
        (UNRECOGNIZED, "tracelens.rulebook.nearest", True),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_a_table_is_compiled_only_for_a_log_that_needs_it(built, log, table, expected):
    assert (built(log)[table] > 0) is expected


_RAISED = 'Traceback (most recent call last):\n  File "x.py", line 1, in f\nValueError: bad value\n'


@pytest.mark.parametrize(
    ("condition", "compiled"),
    [
        # an ``all`` stops at its first condition that fails: the next one's regex is never built
        (
            {"all": [{"line": "no such line"}, {"exception": {"type": "KeyError"}}]},
            [b"no such line"],
        ),
        # a message is searched only in an exception whose type matched
        ({"exception": {"type": "KeyError", "message": "bad"}}, ["KeyError"]),
        ({"exception": {"type": "ValueError", "message": "bad"}}, ["ValueError", "bad"]),
        # a frame's next field only when the one before matched
        ({"frame": {"function": "g", "file": "x"}}, ["g"]),
        ({"frame": {"function": "f", "file": "x"}}, ["f", "x"]),
    ],
)
def test_a_condition_compiles_a_regex_when_it_first_searches_with_it(
    condition, compiled, monkeypatch
):
    from tracelens.engine import parse
    from tracelens.rulebook import conditions
    from tracelens.rulebook.context import Context

    asked: list[str | bytes] = []
    real = conditions.compile_regex

    def recording(pattern: str | bytes, *, multiline: bool = False):
        asked.append(pattern)
        return real(pattern, multiline=multiline)

    monkeypatch.setattr(conditions, "compile_regex", recording)
    check = conditions.compile_condition(condition)
    assert asked == []  # nothing compiled before the rule runs
    check(Context(parse(_RAISED)))
    assert asked == compiled


_COMPILES_AT_IMPORT = (
    "import importlib, re, sys\n"
    "import re2\n"
    "import tracelens.regex\n"
    "callers = []\n"
    "def spy(real):\n"
    "    def compile(pattern, *args, **kwargs):\n"
    "        frame = sys._getframe(1)\n"
    "        while frame.f_code.co_filename == tracelens.regex.__file__ or (\n"
    "            frame.f_code.co_filename.endswith('functools.py')\n"
    "        ):\n"
    "            frame = frame.f_back\n"
    "        callers.append(frame.f_code.co_filename)\n"
    "        return real(pattern, *args, **kwargs)\n"
    "    return compile\n"
    "re.compile, re2.compile = spy(re.compile), spy(re2.compile)\n"
    "module = importlib.import_module(sys.argv[1])\n"
    "print(callers.count(module.__file__))"
)
"""How many regexes a module's own code compiles while it is imported (those of the modules
it imports are theirs)."""


@pytest.mark.parametrize(
    "module",
    [
        "tracelens.read.failures",
        "tracelens.facts.payloads",
        "tracelens.rulebook.unrecognized",
        "tracelens.parse.normalize",
        "tracelens.parse.richtb",
        "tracelens.parse.ipythontb",
        "tracelens.render.common",
    ],
)
def test_importing_a_module_compiles_none_of_its_regexes(module):
    out = _python(_COMPILES_AT_IMPORT, module)
    assert out.stdout.split() == ["0"], out.stderr


_ENVELOPES_COMPILED = (
    "import sys\n"
    "from tracelens.read import logread\n"
    "logread.records_from_text(sys.argv[1])\n"
    "print(' '.join(e.name for e in logread.ENVELOPES if 'pattern' in e.__dict__))"
)


@pytest.mark.parametrize(
    ("text", "compiled"),
    [
        ("", []),  # imported: none
        ("(EngineCore_DP0 pid=245) ", ["process-tag"]),  # the first of those "(" allows matched
        # tried, in table order, and none matched
        ("hello", ["compose-prefix", "pdsh-host", "logger-bracket-level"]),
    ],
)
def test_an_envelope_regex_is_compiled_when_a_line_first_tries_it(text, compiled):
    out = _python(_ENVELOPES_COMPILED, text)
    assert out.stdout.split() == compiled, out.stderr


@pytest.mark.parametrize(
    ("pairs", "exception", "compiled"),
    [
        # a wrapper's message regex only for an exception whose type matched
        ([("KeyError", "lost")], ("ValueError", "bad"), ["KeyError"]),
        ([("ValueError", "lost")], ("ValueError", "bad"), ["ValueError", "lost"]),
        # the first wrapper that matches ends the search
        ([("ValueError", None), ("KeyError", None)], ("ValueError", "bad"), ["ValueError"]),
    ],
)
def test_a_wrapper_compiles_a_regex_when_it_first_searches_with_it(
    pairs, exception, compiled, monkeypatch
):
    from tracelens.models import ExceptionInfo
    from tracelens.rulebook import wrappers as origin

    asked: list[str] = []
    real = origin.compile_regex

    def recording(pattern: str, *, multiline: bool = False):
        asked.append(pattern)
        return real(pattern, multiline=multiline)

    monkeypatch.setattr(origin, "compile_regex", recording)
    monkeypatch.setattr(origin, "reused_literal", lambda pattern: None)  # no literal pre-check
    wrappers = origin.Wrappers(pairs)
    assert asked == []
    wrappers.exception(ExceptionInfo(type=exception[0], message=exception[1]))
    assert asked == compiled


@pytest.mark.parametrize(
    ("log", "read", "fires"),
    [
        (_RAISED, [], False),  # no version fact: the test is never read (nor packaging imported)
        ("INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.5.4\n", ["<0.6"], True),
        ("INFO 01-20 13:00:00 [api_server.py:1] vLLM API server version 0.8.5\n", ["<0.6"], False),
    ],
    ids=["no-fact", "fact-passes", "fact-fails"],
)
def test_a_fact_test_is_read_when_a_log_first_holds_its_fact(log, read, fires, monkeypatch):
    from tracelens.engine import parse
    from tracelens.rulebook import conditions
    from tracelens.rulebook.context import Context

    asked: list[str] = []
    real = conditions.parse_fact_test

    def recording(test: str, where: str = "fact"):
        asked.append(test)
        return real(test, where)

    monkeypatch.setattr(conditions, "parse_fact_test", recording)
    check = conditions.compile_condition({"fact": {"vllm_version": "<0.6"}})
    assert asked == []
    assert (check(Context(parse(log))) is not None) is fires
    check(Context(parse(log)))  # read once per condition, however many logs it tests
    assert asked == read
