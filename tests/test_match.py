"""The matcher: fact tests, placeholders, evidence, ranking (tables of cases)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tracelens.engine import diagnose
from tracelens.rulebook.calibration import EXPLAINS, TABLE, lookup
from tracelens.rulebook.facttest import parse_fact_test
from tracelens.rulebook.load import load
from tracelens.rulebook.placeholders import fill

FACT_TESTS = [
    (">=12.0", "12.0", True),
    (">=12.0", "9.0", False),
    ("<0.17", "0.16.0rc2.dev313+g4a1d5c2e9", True),
    ("<0.17", "0.17.1", False),
    (">=0.10,<0.17", "0.11.0", True),
    (">=0.10,<0.17", "0.9.2", False),
    ("==8", "8", True),
    ("!=auto", "auto", False),
    ("!=auto", "fp8_e4m3", True),
    ("fp8*", "fp8_e4m3", True),
    ("fp8*", "FP8", True),
    ("fp8*", "auto", False),
    ("*", "anything", True),
    (">2", "10", True),
    ("<2.5", "2.10.0", False),
]


@pytest.mark.parametrize("test,value,expected", FACT_TESTS)
def test_fact_tests(test, value, expected):
    assert parse_fact_test(test)(value) is expected


@pytest.mark.parametrize(
    "template,values,expected",
    [
        ("cp {model_path}/c.json{,.bak}", {"model_path": "/m"}, "cp /m/c.json{,.bak}"),
        ("tp={tensor_parallel_size}", {}, "tp=<tensor_parallel_size>"),
        ("{a}{b}", {"a": "1", "b": "2"}, "12"),
        ('json {"k": 1}', {}, 'json {"k": 1}'),
        # a fallback that is a placeholder of its own, at any depth
        ("({signal|{fatal|a crash}})", {"fatal": "Aborted"}, "(Aborted)"),
        ("({signal|{fatal|a crash}})", {"signal": "SIGSEGV", "fatal": "x"}, "(SIGSEGV)"),
        ("({signal|{fatal|a crash}})", {}, "(a crash)"),
        ("{a|{b|{c|deep}}}", {"c": "C"}, "C"),
        # values go in as they are: the log's own braces are never filled
        ("{a} {b}", {"a": "{b}", "b": "2"}, "{b} 2"),
        ("{a|{b}}", {"b": "{a}"}, "{a}"),
        # what is not a whole placeholder stays text
        ("{a|open", {}, "{a|open"),
        ("{a|x{", {"a": "1"}, "{a|x{"),
        ("}{ {}", {}, "}{ {}"),
    ],
)
def test_fill(template, values, expected):
    assert fill(template, values) == expected


RULE = """\
id: {id}
title: {title}
category: {category}
severity: fatal
secondary: {secondary}
needs: [{needs}]
match:
{match}
root_cause: "cause for {{model}} with {{alloc}}"
remedies:
  - title: Upgrade
    fixed_in: {{package: vllm, version: "0.10.0"}}
  - title: Lower memory for {{model}}
    commands: ["vllm serve {{model}} --gpu-memory-utilization 0.8"]
references: [https://example.org/x]
"""


def write_rule(
    root: Path,
    rid: str,
    match: str,
    *,
    category="gpu-oom",
    secondary=False,
    needs='"OutOfMemoryError"',
    title="t",
):
    path = root / (rid + ".yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        RULE.format(
            id=rid,
            title=title,
            category=category,
            secondary=str(secondary).lower(),
            needs=needs,
            match=textwrap.indent(match, "  "),
        )
    )


LOG = """\
INFO 01-20 13:03:40 [api_server.py:1] vLLM API server version 0.11.0
INFO 01-20 13:03:41 [core.py:76] Initializing a V1 LLM engine (v0.11.0) with config: model='/models/m', tensor_parallel_size=2, kv_cache_dtype=auto
(EngineCore_DP0 pid=9) ERROR 01-20 13:03:50 [core.py:700] Traceback (most recent call last):
(EngineCore_DP0 pid=9) ERROR 01-20 13:03:50 [core.py:700]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py", line 10, in profile_run
(EngineCore_DP0 pid=9) ERROR 01-20 13:03:50 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
(APIServer pid=1) ERROR 01-20 13:03:51 [core_client.py:1] EngineDeadError: engine died
"""


@pytest.fixture()
def rules(tmp_path):
    write_rule(
        tmp_path,
        "t/oom",
        "all:\n  - exception: {type: 'OutOfMemoryError$', message: 'Tried to allocate (?P<alloc>[\\d.]+ [GM]iB)'}\n  - frame: {function: '^profile_run$'}\n",
    )
    write_rule(tmp_path, "t/oom-generic", "all:\n  - line: 'CUDA out of memory'\n")
    write_rule(
        tmp_path,
        "t/dead",
        "all:\n  - line: 'EngineDeadError'\n",
        category="worker-died",
        secondary=True,
        needs='"EngineDeadError"',
    )
    write_rule(tmp_path, "t/never", "all:\n  - line: 'never printed'\n", needs='"never printed"')
    write_rule(
        tmp_path,
        "t/old-vllm",
        "all:\n  - line: 'EngineDeadError'\n  - fact: {vllm_version: '<0.10'}\n",
        category="worker-died",
        needs='"EngineDeadError"',
    )
    return load([tmp_path])


def test_ranking_primary_before_symptom_specific_before_generic(rules):
    rep = diagnose(LOG, rules)
    ids = [d.rule_id for d in rep.diagnoses]
    assert ids[0] == "t/oom"
    assert ids[-1] == "t/dead"
    assert "t/never" not in ids and "t/old-vllm" not in ids
    # the generic rule restates the same OOM on a subset of the evidence: folded away
    assert "t/oom-generic" not in ids


def test_evidence_placeholders_and_upgrade_in_place(rules):
    d = diagnose(LOG, rules).diagnoses[0]
    assert {e.line for e in d.evidence} == {4, 5}
    assert d.root_cause == "cause for /models/m with 2.00 GiB"
    # vllm 0.11.0 >= 0.10.0: the upgrade is already in place and goes last
    assert [r.title for r in d.remedies] == ["Lower memory for /models/m", "Upgrade"]
    assert d.remedies[-1].already_applied and not d.remedies[0].already_applied
    assert d.remedies[0].commands == ["vllm serve /models/m --gpu-memory-utilization 0.8"]
    assert d.confidence > 0.5


def test_a_symptom_whose_cause_is_not_in_the_log_is_reported_alone():
    # the shipped symptom rule declares EngineDeadError as a report of another failure
    rep = diagnose(
        "(APIServer pid=1) ERROR 01-20 13:03:51 [core_client.py:1] EngineDeadError: engine died\n"
    )
    assert [d.rule_id for d in rep.diagnoses] == ["vllm/engine-dead"]
    assert rep.diagnoses[0].secondary


def test_an_undeclared_wrapper_alone_is_named_as_the_failure(rules):
    # a symptom rule that does not declare what it reports: the exception is all there is
    rep = diagnose(
        "(APIServer pid=1) ERROR 01-20 13:03:51 [core_client.py:1] EngineDeadError: engine died\n",
        rules,
    )
    assert [d.rule_id for d in rep.diagnoses] == ["unrecognized", "t/dead"]


SGLANG_CRASH = """\
[2026-07-10 03:06:30 TP0] Decode batch. #running-req: 1, #token: 1373, token usage: 0.01, cuda graph: True, gen throughput (token/s): 63.44, #queue-req: 0,
[2026-07-10 03:06:37 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2650, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/managers/schedule_batch.py", line 1466, in assign_widget_slots_from_reqs
    torch.tensor([req.widget_slot for req in reqs], dtype=torch.int64)
TypeError: 'NoneType' object cannot be interpreted as an integer

[2026-07-10 03:06:37] Received sigquit from a child process. It usually means the child failed.
"""


def test_a_failure_no_rule_knows_comes_first_and_the_symptom_points_at_it():
    rep = diagnose(SGLANG_CRASH)
    assert [d.rule_id for d in rep.diagnoses] == ["unrecognized", "sglang/scheduler-died"]
    un, symptom = rep.diagnoses
    # the bare exception line belongs to the TP0 stream although SGLang did not tag it
    assert rep.document.tracebacks[0].exception.type == "TypeError"
    assert (
        "line 7 in TP0: TypeError: 'NoneType' object cannot be interpreted as an integer"
        in un.root_cause
    )
    assert "raised in assign_widget_slots_from_reqs" in un.root_cause
    assert "line 7: TypeError" in symptom.notes[0]
    assert 7 in {e.line for e in symptom.evidence}


def test_wrappers_that_report_another_process_are_not_named_as_the_cause():
    log = (
        Path(__file__).resolve().parent.parent
        / "rules"
        / "vllm"
        / "worker-died-unexpectedly.example.log"
    )
    rep = diagnose(log.read_bytes())  # only "RuntimeError: Executor failed." and EngineDeadError
    assert rep.diagnoses and all(d.secondary for d in rep.diagnoses)
    assert not any("No rule recognizes" in n for d in rep.diagnoses for n in d.notes)


def test_a_cause_found_by_a_rule_gets_no_such_note():
    rep = diagnose(
        SGLANG_CRASH.replace(
            "TypeError: 'NoneType' object cannot be interpreted as an integer",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        )
    )
    assert not rep.diagnoses[0].secondary
    assert not any("No rule recognizes" in n for d in rep.diagnoses for n in d.notes)


def test_none_block_and_any_block(tmp_path):
    write_rule(
        tmp_path,
        "t/a",
        "any:\n  - line: 'alpha'\n  - line: 'beta'\nnone:\n  - line: 'gamma'\n",
        needs="",
    )
    rs = load([tmp_path])
    assert [d.rule_id for d in diagnose("x beta y\n", rs).diagnoses] == ["t/a"]
    assert diagnose("x beta gamma\n", rs).diagnoses == []
    assert diagnose("nothing\n", rs).diagnoses == []


def test_hostile_log_does_not_hang(rules):
    hostile = ("a" * 200_000 + "!\n") * 20
    assert diagnose(hostile, rules).diagnoses == []


def test_several_independent_problems(tmp_path):
    write_rule(
        tmp_path, "t/one", "all:\n  - line: 'first problem'\n", needs="", category="port-in-use"
    )
    write_rule(
        tmp_path,
        "t/two",
        "all:\n  - line: 'second problem'\n",
        needs="",
        category="shm-insufficient",
    )
    rs = load([tmp_path])
    ids = {d.rule_id for d in diagnose("first problem\nsecond problem\n", rs).diagnoses}
    assert ids == {"t/one", "t/two"}


def test_conditional_remedy_and_confidence(tmp_path):
    rule = tmp_path / "t" / "c.yaml"
    rule.parent.mkdir()
    rule.write_text(
        "id: t/c\ntitle: t\ncategory: gpu-oom\nseverity: fatal\nneeds: [OutOfMemoryError]\n"
        "match: {all: [{exception: {type: 'OutOfMemoryError$'}}]}\nroot_cause: r\n"
        "remedies:\n  - title: always\n  - title: vllm only\n    when: {fact: {vllm_version: '*'}}\n"
        "references: [https://example.org]\n"
    )
    rs = load([tmp_path])
    plain = diagnose("torch.OutOfMemoryError: CUDA out of memory.\n", rs).diagnoses[0]
    assert [r.title for r in plain.remedies] == ["always"]
    # an exact exception type alone (raw belief 0.75), calibrated as a first diagnosis
    assert plain.confidence == lookup(TABLE[EXPLAINS], 0.75)
    with_vllm = diagnose(LOG, rs).diagnoses[0]
    assert [r.title for r in with_vllm.remedies] == ["always", "vllm only"]


def test_a_conditional_does_not_help_item_is_shown_only_when_it_holds(tmp_path):
    rule = tmp_path / "t" / "c.yaml"
    rule.parent.mkdir()
    rule.write_text(
        "id: t/c\ntitle: t\ncategory: gpu-oom\nseverity: fatal\nneeds: [OutOfMemoryError]\n"
        "match: {all: [{exception: {type: 'OutOfMemoryError$'}}]}\nroot_cause: r\n"
        "remedies:\n  - title: always\n"
        "does_not_help:\n  - plain advice\n"
        "  - when: {fact: {vllm_version: '*'}}\n    text: vllm {vllm_version} advice\n"
        "  - when: {line: 'size (?P<size>\\d+)'}\n    text: size {size} advice\n"
        "references: [https://example.org]\n"
    )
    rs = load([tmp_path])
    plain = diagnose("torch.OutOfMemoryError: CUDA out of memory.\n", rs).diagnoses[0]
    assert plain.does_not_help == ["plain advice"]
    with_vllm = diagnose(LOG, rs).diagnoses[0]
    assert with_vllm.does_not_help == ["plain advice", "vllm 0.11.0 advice"]
    sized = diagnose("batch size 512\ntorch.OutOfMemoryError: CUDA out of memory.\n", rs)
    assert sized.diagnoses[0].does_not_help == ["plain advice", "size 512 advice"]


def test_a_bad_regex_in_a_does_not_help_condition_is_a_rule_error(tmp_path):
    from tracelens.rulebook.model import validate_rule

    data = {
        "id": "t/c",
        "title": "t",
        "category": "gpu-oom",
        "severity": "fatal",
        "match": {"all": [{"line": "x"}]},
        "root_cause": "r",
        "remedies": [{"title": "a"}],
        "does_not_help": [{"when": {"line": "(unclosed"}, "text": "t"}],
        "references": ["https://example.org"],
    }
    with pytest.raises(ValueError) as exc:
        validate_rule(data)
    assert "does_not_help" in str(exc.value)


def test_a_remedy_fills_in_what_its_own_condition_captured(tmp_path):
    rule = tmp_path / "t" / "c.yaml"
    rule.parent.mkdir()
    rule.write_text(
        "id: t/c\ntitle: t\ncategory: dependency-missing\nseverity: fatal\nneeds: [No solution]\n"
        "match: {all: [{line: 'No solution found when resolving dependencies'}]}\nroot_cause: r\n"
        "remedies:\n  - title: 'Install {package} from PyPI first'\n"
        "    when: {line: 'hint: `(?P<package>[\\w-]+)` was found on'}\n"
        "    commands: ['uv pip install {package}']\n"
        "references: [https://example.org]\n"
    )
    rs = load([tmp_path])
    log = (
        "  × No solution found when resolving dependencies:\n"
        "  hint: `cmake` was found on https://download.pytorch.org/whl/cu128, but not at the requested version\n"
    )
    (d,) = diagnose(log, rs).diagnoses
    assert [(r.title, r.commands) for r in d.remedies] == [
        ("Install cmake from PyPI first", ["uv pip install cmake"])
    ]


def test_line_evidence_points_at_the_text_not_the_blank_line_above(tmp_path):
    write_rule(
        tmp_path,
        "t/anchored",
        "all:\n  - line: '^\\s*Cannot access gated repo'\n",
        needs='"Cannot access"',
        category="model-access",
    )
    rs = load([tmp_path])
    d = diagnose("first\n\nCannot access gated repo for url x\n", rs).diagnoses[0]
    assert [e.line for e in d.evidence] == [3]


@pytest.mark.parametrize(
    "commands,facts,repeated",
    [
        (
            ["vllm serve {model_path} --gpu-memory-utilization 0.85"],
            {"gpu_memory_utilization": "0.85"},
            [("--gpu-memory-utilization", "0.85")],
        ),
        (
            ["vllm serve {model_path} --gpu-memory-utilization 0.85"],
            {"gpu_memory_utilization": "0.9"},
            [],
        ),
        (
            ["vllm serve m --max-model-len=8192 --enforce-eager"],
            {"max_model_len": "8192"},
            [("--max-model-len", "8192")],
        ),
        (["vllm serve m --max-model-len 8192 --max-num-seqs 64"], {"max_model_len": "8192"}, []),
        (
            [
                "vllm serve {model_path} --tensor-parallel-size {tensor_parallel_size} --trust-remote-code"
            ],
            {"tensor_parallel_size": "8"},
            [],
        ),
        (
            ["vllm serve m --kv-cache-dtype auto   # the default"],
            {"kv_cache_dtype_arg": "auto", "kv_cache_dtype": "fp8"},
            [("--kv-cache-dtype", "auto")],
        ),
        (["pip install -U vllm"], {}, []),
    ],
)
def test_a_remedy_that_repeats_what_the_log_shows_goes_last(commands, facts, repeated):
    from tracelens.models import Fact
    from tracelens.rulebook.rank import _flags_already_set

    assert (
        _flags_already_set(commands, {k: Fact(name=k, value=v, line=1) for k, v in facts.items()})
        == repeated
    )


def test_a_frame_conditions_named_groups_fill_placeholders(tmp_path):
    write_rule(
        tmp_path,
        "t/oom-where",
        "all:\n  - exception: {type: 'OutOfMemoryError$'}\n"
        "  - frame: {function: '^(?P<alloc>profile)_run$'}\n",
        title="OOM in {alloc|<where>}",
    )
    top = diagnose(LOG, load([tmp_path])).diagnoses[0]
    assert top.rule_id == "t/oom-where" and top.title == "OOM in profile"


def test_a_line_condition_with_a_count_holds_only_from_that_many_lines(tmp_path):
    write_rule(
        tmp_path,
        "t/repeat",
        "all:\n  - line: {text: 'grad_norm.: nan', count: 3}\n",
        needs="",
    )
    rs = load([tmp_path])
    step = "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.0, 'epoch': 0.%d}\n"
    assert diagnose("".join(step % k for k in range(2)), rs).diagnoses == []
    got = diagnose("".join(step % k for k in range(5)), rs).diagnoses
    assert [d.rule_id for d in got] == ["t/repeat"]
    assert [e.line for e in got[0].evidence] == [1, 2, 3]  # evidence stays three lines


def test_a_count_below_two_is_refused(tmp_path):
    write_rule(tmp_path, "t/once", "all:\n  - line: {text: 'x', count: 1}\n", needs="")
    with pytest.raises(Exception, match="count"):
        load([tmp_path])


def test_of_two_rules_that_say_as_much_the_one_whose_evidence_comes_first_ranks_first(tmp_path):
    write_rule(tmp_path, "t/zz", "all:\n  - line: 'alpha fails'\n", needs="")
    write_rule(tmp_path, "t/aa", "all:\n  - line: 'beta fails'\n", needs="")
    rs = load([tmp_path])
    got = diagnose("x alpha fails\ny beta fails\n", rs).diagnoses
    assert [d.rule_id for d in got] == ["t/zz", "t/aa"]  # not by name


TB_LOG = """\
INFO starting
Traceback (most recent call last):
  File "/home/user/app.py", line 7, in render_page
    out = template.render()
jinja2.exceptions.TemplateError: bad loop
ERROR template render failed on page 3
"""


@pytest.mark.parametrize(
    "any_block",
    [
        "any:\n  - exception: {type: 'TemplateError$'}\n  - exception: {type: 'NoSuchError$'}\n",
        "any:\n  - line: 'render failed'\n  - exception: {type: 'TemplateError$'}\n",
        "any:\n  - exception: {type: 'NoSuchError$'}\n",
    ],
    ids=["cheap-any-first", "any-after-all", "any-fails"],
)
def test_a_block_answers_and_orders_its_evidence_whatever_it_tests_first(tmp_path, any_block):
    """Cheap 'any' conditions (exception types) are tested before costly 'all' ones (frames):
    the same answer, and the 'all' evidence still comes first."""
    from tracelens.engine import parse
    from tracelens.rulebook.conditions import compile_rule
    from tracelens.rulebook.context import Context

    write_rule(
        tmp_path,
        "t/b",
        "all:\n  - frame: {function: '^render_page$'}\n" + any_block,
        needs="",
    )
    rs = load([tmp_path])
    hit = compile_rule(rs.rules[0].rule)(Context(parse(TB_LOG)))
    if "NoSuchError" in any_block and "TemplateError" not in any_block:
        assert hit is None
        return
    assert hit is not None
    whys = [e.why.split(" ")[0] for e in hit.evidence]
    assert whys[0] == "frame" and "exception" in whys


@pytest.mark.parametrize(
    "printed,shown",
    [
        # Python's repr of a Windows filename in an OSError's message: backslashes doubled
        (r"C:\\Users\\me\\AppData\\Local\\Temp\\cache", r"C:\Users\me\AppData\Local\Temp\cache"),
        (r"\\\\fileserver\\models\\llama", r"\\fileserver\models\llama"),
        # written as a person types it, or not a Windows path: left as it is
        (r"C:\Users\me\cache", r"C:\Users\me\cache"),
        (r"/home/me/a\\b", r"/home/me/a\\b"),
    ],
)
def test_a_windows_path_a_message_quotes_by_repr_fills_a_placeholder_as_typed(printed, shown):
    import re

    from tracelens.rulebook.conditions import _captures

    assert _captures(re.match(r"(?P<path>.*)", printed)) == {"path": shown}
