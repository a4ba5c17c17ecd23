"""A failure a rule knows, printed only as a warning, that the program carried on from (no
failure anywhere in the log) did not stop the run: the diagnosis is a warning. A line printed
without a warning level, or one nothing came after, keeps its severity."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose

WARNED = (
    "/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:182: UserWarning: CUDA "
    "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
    "yet initialized (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:109.)"
)
PLAIN = "Error 802: system not yet initialized"
TRAINS = [
    f"{{'loss': 1.{k}, 'grad_norm': 0.8, 'learning_rate': 0.0001, 'epoch': 0.{k}}}"
    for k in range(4)
]


@pytest.mark.parametrize(
    ("lines", "severity"),
    [
        ([WARNED, *TRAINS], "warning"),  # warned, then trained
        ([WARNED], "fatal"),  # warned, and nothing after
        ([*TRAINS, WARNED], "fatal"),  # the progress was before it
    ],
    ids=["warned-then-trained", "warned-only", "progress-before"],
)
def test_a_warning_the_program_carried_on_from_is_no_failure(lines, severity):
    d = diagnose("\n".join(lines)).diagnoses
    hit = [x for x in d if x.rule_id == "system/fabric-manager-not-ready"]
    assert hit, [x.rule_id for x in d]
    assert hit[0].severity == severity


def test_only_a_warning_level_or_a_warnings_module_line_is_a_warning():
    from tracelens.models import Record
    from tracelens.parse.document import warning_record

    assert warning_record(Record(line=1, text=WARNED))
    assert warning_record(Record(line=1, text=PLAIN, level="WARNING"))
    assert not warning_record(Record(line=1, text=PLAIN))
    assert not warning_record(Record(line=1, text=PLAIN, level="ERROR"))
