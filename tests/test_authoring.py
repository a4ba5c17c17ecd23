"""Rule authoring: `rules new` scaffolds a rule that passes at once from a log, `rules test`
says why a rule did not fire, and examples keep their diagnosis in the envelopes real logs
come in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from tracelens.authoring.checks import why_not
from tracelens.authoring.scaffold import message_regex
from tracelens.authoring.transforms import TRANSFORMS
from tracelens.cli import main
from tracelens.engine import parse
from tracelens.read.logread import peel
from tracelens.rulebook.load import default_rules, load, rule_dirs

ROOT = Path(__file__).resolve().parent.parent
NOVEL = b"""Traceback (most recent call last):
  File "/srv/app/worker.py", line 9, in spin_frobnicator
    raise RuntimeError("frobnicator jammed at stage 3 after 120 s")
RuntimeError: frobnicator jammed at stage 3 after 120 s
"""


def test_rules_new_from_a_log_passes_its_own_test(tmp_path, capsys):
    log = tmp_path / "crash.log"
    log.write_bytes(NOVEL)
    rules = tmp_path / "my-rules"
    assert (
        main(["rules", "new", "app/frobnicator-jam", "--rules", str(rules), "--from", str(log)])
        == 0
    )
    rule = yaml.safe_load((rules / "app" / "frobnicator-jam.yaml").read_text())
    assert rule["match"]["all"][0]["exception"]["type"] == "RuntimeError$"
    assert (rules / "app" / "frobnicator-jam.example.log").read_bytes() == NOVEL
    capsys.readouterr()
    assert main(["rules", "test", "--rules", str(rules), "--rule", "app/frobnicator-jam"]) == 0
    assert "0 failed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,needle",
    [
        (["rules", "new", "NoDomain"], "DOMAIN/NAME"),
        (["rules", "new", "a/b", "--category", "gpuoom"], "unknown category"),
        (["rules", "test", "--rule", "no/such-rule"], "no rule"),
        (["rules", "list", "--category", "gpuoom"], "did you mean 'gpu-oom'"),
        (["explain", "mla-fp8"], "did you mean 'vllm/attention/mla-fp8-kv-unsupported'"),
        (["rules", "show", "torch/gpu-om"], "did you mean 'torch/gpu-oom'"),
    ],
)
def test_rules_new_and_test_refuse_bad_input_in_one_line(
    args, needle, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_rules_new_refuses_to_overwrite(tmp_path, capsys):
    rules = tmp_path / "r"
    assert main(["rules", "new", "app/x", "--rules", str(rules)]) == 0
    assert main(["rules", "new", "app/x", "--rules", str(rules)]) == 2
    assert "exists already" in capsys.readouterr().err


def test_message_regex_keeps_the_constant_part():
    rx = message_regex("CUDA out of memory. Tried to allocate 2.00 GiB on GPU 3 (pid 4155)")
    assert rx.startswith("CUDA out of memory") and "4155" not in rx and "2.00" not in rx


def test_why_not_names_the_missing_literal_and_the_failed_condition(tmp_path):
    rdir = tmp_path / "r" / "app"
    rdir.mkdir(parents=True)
    (rdir / "jam.yaml").write_text(
        "id: app/jam\ntitle: t\ncategory: config-invalid\nseverity: error\nneeds: ['frobnicator']\n"
        "match:\n  all:\n    - exception: {type: 'ValueError$'}\nroot_cause: r\nremedies: [{title: x}]\n"
        "references: ['https://github.com/o/r/issues/1']\n"
    )
    rs = load([tmp_path / "r"], cache=False)
    lr = rs.get("app/jam")
    assert "all[0]" in why_not(lr, parse(NOVEL), rs)
    assert "needs literal" in why_not(lr, parse(NOVEL.replace(b"frobnicator", b"gizmo")), rs)


@pytest.mark.parametrize("name,fn", TRANSFORMS, ids=[n for n, _ in TRANSFORMS])
def test_the_seed_keeps_its_diagnosis_in_every_envelope(name, fn):
    from tracelens.engine import report

    seed = (ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log").read_bytes()
    rep = report(parse(fn(seed)), default_rules())
    assert rep.diagnoses[0].rule_id == "vllm/attention/mla-fp8-kv-unsupported"


@pytest.mark.parametrize(
    "line,stream,text",
    [
        (
            "(RayWorkerWrapper pid=9, ip=10.0.0.7) (EngineCore_DP0 pid=245) boom",
            "RayWorkerWrapper pid=9, ip=10.0.0.7 / EngineCore_DP0 pid=245",
            "boom",
        ),
        ("2025-11-20T13:00:01.000000001Z 2025-11-20T13:00:01Z ValueError: x", "", "ValueError: x"),
        ("0: \tsize mismatch for lm_head.weight", "0", "\tsize mismatch for lm_head.weight"),
    ],
)
def test_stacked_envelopes_are_peeled(line, stream, text):
    rec = peel(line, 1)
    assert (rec.stream, rec.text) == (stream, text)


def test_rule_dirs_with_extra_rules():
    assert rule_dirs(("x",))[-1] == Path("x")


def test_rules_preview_lists_the_stored_incidents_a_new_rule_would_catch(tmp_path, capsys):
    log = tmp_path / "crash.log"
    log.write_bytes(NOVEL)
    db = tmp_path / "i.db"
    assert main(["ingest", "--db", str(db), str(log)]) == 0
    rules = tmp_path / "my-rules"
    assert (
        main(["rules", "new", "app/frobnicator-jam", "--rules", str(rules), "--from", str(log)])
        == 0
    )
    capsys.readouterr()
    assert (
        main(["rules", "preview", "--rules", str(rules), "--db", str(db), "--format", "json"]) == 0
    )
    changes = json.loads(capsys.readouterr().out)
    assert [(c["kind"], c["before"], c["after"]) for c in changes] == [
        ("catch", "unrecognized", "app/frobnicator-jam")
    ]


def test_rules_preview_of_a_rule_that_matches_nothing_stored(tmp_path, capsys):
    log = tmp_path / "crash.log"
    log.write_bytes(NOVEL)
    db = tmp_path / "i.db"
    assert main(["ingest", "--db", str(db), str(log)]) == 0
    rules = tmp_path / "my-rules"
    assert main(["rules", "new", "app/other", "--rules", str(rules)]) == 0
    capsys.readouterr()
    assert main(["rules", "preview", "--rules", str(rules), "--db", str(db)]) == 0
    assert "no stored incident changes" in capsys.readouterr().out


def test_a_rule_pack_may_add_categories(tmp_path):
    from tracelens.rulebook.model import RuleError

    pack = tmp_path / "pack"
    (pack / "app").mkdir(parents=True)
    (pack / "app" / "jam.yaml").write_text(
        "id: app/jam\ntitle: t\ncategory: frobnicator-jam\nseverity: error\n"
        "match:\n  all:\n    - line: 'frobnicator jammed'\nroot_cause: r\nremedies: [{title: x}]\n"
        "references: ['https://github.com/o/r/issues/1']\n"
    )
    with pytest.raises(RuleError, match="not a known category"):
        load([pack], cache=False)
    (pack / "categories.yaml").write_text(
        "categories:\n  - name: frobnicator-jam\n    meaning: our own\n"
    )
    assert load([pack], cache=False).get("app/jam") is not None
    # the list is read again when it changes (same size, so only its time tells)
    cats = pack / "categories.yaml"
    cats.write_text(cats.read_text().replace("frobnicator-jam", "frobnicator-jim"))
    stamp = cats.stat().st_mtime_ns + 10**9
    os.utime(cats, ns=(stamp, stamp))
    with pytest.raises(RuleError, match="not a known category"):
        load([pack], cache=False)
