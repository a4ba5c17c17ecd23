"""Confidence calibration: the generated table is well-formed, matches its document, and is what
the first diagnosis's confidence is read from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracelens.engine import diagnose
from tracelens.rulebook import calibration
from tracelens.rulebook.load import load

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", calibration.KINDS)
def test_each_kind_is_a_monotone_step_function_over_the_whole_range(kind):
    steps = calibration.TABLE[kind]
    bounds = [u for u, _ in steps]
    values = [v for _, v in steps]
    assert bounds == sorted(set(bounds)) and bounds[-1] == 1.0
    assert values == sorted(values)
    assert all(0.0 < v < 1.0 for v in values)


def test_the_document_shows_the_table_the_code_uses():
    doc = (ROOT / "docs" / "confidence.md").read_text()
    for kind, steps in calibration.TABLE.items():
        line = re.search(rf"^- `{re.escape(kind)}`: (.*)$", doc, re.M)
        assert line is not None, kind
        shown = re.findall(r"up to ([\d.]+): ([\d.]+)", line.group(1))
        assert [(float(u), float(v)) for u, v in shown] == steps


@pytest.mark.parametrize(
    "steps,raw,expected",
    [
        ([(0.5, 0.3), (1.0, 0.9)], 0.5, 0.3),
        ([(0.5, 0.3), (1.0, 0.9)], 0.51, 0.9),
        ([(0.5, 0.3), (1.0, 0.9)], 1.0, 0.9),
        ([(0.5, 0.3)], 0.7, 0.3),  # past the last bound: the last step
    ],
)
def test_lookup(steps, raw, expected):
    assert calibration.lookup(steps, raw) == expected


RULE = (
    "id: t/oom\ntitle: t\ncategory: gpu-oom\nseverity: fatal\nneeds: [OutOfMemoryError]\n"
    "match: {all: [{exception: {type: 'OutOfMemoryError$'}}]}\nroot_cause: r\n"
    "remedies:\n  - title: r\n"
    "references: [https://example.org]\n"
)


def test_first_diagnosis_is_calibrated_and_the_rest_keep_their_raw_belief(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "oom.yaml").write_text(RULE)
    (tmp_path / "t" / "line.yaml").write_text(
        RULE.replace("t/oom", "t/line")
        .replace("gpu-oom", "host-oom")
        .replace("needs: [OutOfMemoryError]", "needs: [disk]")
        .replace("{exception: {type: 'OutOfMemoryError$'}}", "{line: 'disk is slow'}")
        .replace("fatal", "warning")
    )
    rs = load([tmp_path])
    log = "warning: disk is slow\ntorch.OutOfMemoryError: CUDA out of memory.\n"
    first, second = diagnose(log, rs).diagnoses
    assert first.rule_id == "t/oom"
    # an exception type alone is a raw belief of 0.75; the rule's evidence holds the failure
    assert first.confidence == calibration.lookup(calibration.TABLE[calibration.EXPLAINS], 0.75)
    assert second.confidence == 0.45  # a plain line condition, not calibrated


def test_a_rule_holding_the_only_reported_failure_explains_it(tmp_path):
    """A log whose only failure is a line that reports one (a container runtime's error
    response): a rule whose evidence holds that line explains the failure the log shows."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "hook.yaml").write_text(
        RULE.replace("t/oom", "t/hook")
        .replace("gpu-oom", "cuda-driver-mismatch")
        .replace("needs: [OutOfMemoryError]", "needs: [ldcache error]")
        .replace("{exception: {type: 'OutOfMemoryError$'}}", "{line: 'ldcache error: open failed'}")
    )
    rs = load([tmp_path])
    log = (
        "$ docker run --rm --gpus all img nvidia-smi\n"
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:380:"
        " starting container process caused: process_linux.go:545: container init caused:"
        " Running hook #1:: error running hook: exit status 1, stdout: , stderr:"
        " nvidia-container-cli: ldcache error: open failed: /sbin/ldconfig.real: no such file"
        " or directory: unknown.\n"
    )
    (first,) = diagnose(log, rs).diagnoses
    assert first.rule_id == "t/hook"
    # a plain line condition is a raw belief of 0.45
    assert first.confidence == calibration.lookup(calibration.TABLE[calibration.EXPLAINS], 0.45)


@pytest.mark.parametrize(
    "rule_id,secondary,explained,kind",
    [
        ("unrecognized", False, False, calibration.UNRECOGNIZED),
        ("x/y", True, True, calibration.SYMPTOM),
        ("x/y", False, True, calibration.EXPLAINS),
        ("x/y", False, False, calibration.ELSEWHERE),
    ],
)
def test_kind_of(rule_id, secondary, explained, kind):
    class D:
        pass

    d = D()
    d.rule_id, d.secondary = rule_id, secondary
    assert calibration.kind_of(d, explained) == kind
