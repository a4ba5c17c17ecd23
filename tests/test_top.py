"""``tracelens top``: counts by fingerprint and by rule, first and last seen, --since counting
only what was seen since, --limit, text and JSON."""

from __future__ import annotations

import json

import pytest

from tracelens.cli import main
from tracelens.incidents.store import Store

# (fingerprint, rule, seen_at) of each occurrence
SEEN = [
    ("fp-oom-a", "torch/gpu-oom", "2026-11-20T10:00:00+00:00"),
    ("fp-oom-a", "torch/gpu-oom", "2026-11-29T10:00:00+00:00"),
    ("fp-oom-a", "torch/gpu-oom", "2026-11-30T09:00:00+00:00"),
    ("fp-nccl", "nccl/watchdog-timeout", "2026-11-30T08:00:00+00:00"),
    ("fp-nccl", "nccl/watchdog-timeout", "2026-11-30T12:00:00+00:00"),
    ("fp-oom-b", "torch/gpu-oom", "2026-11-30T11:00:00+00:00"),
    ("fp-old", None, "2026-10-01T00:00:00+00:00"),
]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "i.db"
    store = Store(path)
    for fp, rule, at in SEEN:
        store.record(
            fingerprint=fp,
            signature=fp,
            fingerprint_fine=fp + "-fine",
            signature_fine=fp,
            title=f"title of {fp}",
            category="gpu-oom" if rule and "oom" in rule else "nccl-error",
            rule_id=rule,  # type: ignore[arg-type]
            severity="error",
            exception_type="RuntimeError",
            message=fp,
            source=f"{fp}.log",
            host=None,
            excerpt="1: boom",
            report={},
            seen_at=at,
        )
    store.close()
    return str(path)


def _top(db, capsys, *args) -> list[dict]:
    assert main(["top", "--db", db, "--format", "json", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "args,expected",
    [
        ([], [("fp-oom-a", 3), ("fp-nccl", 2), ("fp-oom-b", 1), ("fp-old", 1)]),
        (["--since", "2026-11-30"], [("fp-nccl", 2), ("fp-oom-b", 1), ("fp-oom-a", 1)]),
        (["--since", "2026-11-30T10:00"], [("fp-nccl", 1), ("fp-oom-b", 1)]),
        (["--limit", "2"], [("fp-oom-a", 3), ("fp-nccl", 2)]),
        (["--since", "2027-01-01"], []),
    ],
)
def test_counts_by_fingerprint(db, capsys, args, expected):
    assert [(r["fingerprint"], r["count"]) for r in _top(db, capsys, *args)] == expected


@pytest.mark.parametrize(
    "args,expected",
    [
        ([], [("torch/gpu-oom", 4, 2), ("nccl/watchdog-timeout", 2, 1), (None, 1, 1)]),
        (["--since", "2026-11-29"], [("torch/gpu-oom", 3, 2), ("nccl/watchdog-timeout", 2, 1)]),
    ],
)
def test_counts_by_rule(db, capsys, args, expected):
    rows = _top(db, capsys, "--by", "rule", *args)
    assert [(r["rule_id"], r["count"], r["incidents"]) for r in rows] == expected


@pytest.mark.parametrize(
    "args,first,last",
    [
        ([], "2026-11-20T10:00:00+00:00", "2026-11-30T09:00:00+00:00"),
        (["--since", "2026-11-25"], "2026-11-29T10:00:00+00:00", "2026-11-30T09:00:00+00:00"),
        (["--by", "rule"], "2026-11-20T10:00:00+00:00", "2026-11-30T11:00:00+00:00"),
    ],
)
def test_first_and_last_seen_are_those_of_what_is_counted(db, capsys, args, first, last):
    row = next(r for r in _top(db, capsys, *args) if r.get("fingerprint", "fp-oom-a") == "fp-oom-a")
    assert (row["first_seen"], row["last_seen"]) == (first, last)


@pytest.mark.parametrize(
    "args,lines",
    [
        ([], ["COUNT", "fp-oom-a", "fp-nccl", "fp-oom-b", "fp-old", "4 of 4 incident(s)"]),
        (["--limit", "1"], ["COUNT", "fp-oom-a", "1 of 4 incident(s) (--limit to see more)"]),
        (["--by", "rule"], ["COUNT", "gpu-oom", "nccl-error", "- (no rule", "3 of 3 rule(s)"]),
        (["--since", "2027-01-01"], ["no incidents seen since 2027-01-01T00:00:00"]),
    ],
)
def test_text_is_a_table_with_a_header_and_a_count(db, capsys, args, lines):
    assert main(["top", "--db", db, *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(lines)
    for line, needle in zip(out, lines):
        assert needle in line


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--since", "last week"], "--since 'last week': give a date"),
        (["--by", "host"], "Invalid value for '--by'"),
        (["--limit", "0"], "Invalid value for '--limit'"),
    ],
)
def test_bad_options_are_one_line(db, capsys, args, needle):
    assert main(["top", "--db", db, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_no_store_yet_is_one_line(tmp_path, capsys):
    assert main(["top", "--db", str(tmp_path / "none.db")]) == 2
    assert "no incident database yet" in capsys.readouterr().err
