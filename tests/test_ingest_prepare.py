"""What a worker prepares for the store (tracelens/fleet/work.py, tracelens/incidents/):
the cheaper ways stay exactly the plain ones."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest

from tracelens.engine import diagnose
from tracelens.fleet.work import _Capture
from tracelens.incidents.incident import save
from tracelens.incidents.records import encoded
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import Store

ROOT = Path(__file__).resolve().parent.parent
LOGS = [
    ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log",
    ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log",
    *sorted((ROOT / "corpus" / "incidents").glob("heldout-r9-0*.log"))[:3],
]


def _rows(path: Path) -> dict[str, list[tuple]]:
    """Every row of the tables a record writes, blobs decompressed, times left out."""
    conn = sqlite3.connect(path)
    out = {}
    for table, skip in (
        ("incidents", {"first_seen", "last_seen"}),
        ("occurrences", {"seen_at"}),
        ("documents", set()),
    ):
        cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")
        names = [d[0] for d in cursor.description]
        out[table] = [
            tuple(
                zlib.decompress(v) if isinstance(v, bytes) else v
                for n, v in zip(names, row)
                if n not in skip
            )
            for row in cursor
        ]
    conn.close()
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_encoded_fields_store_the_same_rows_as_plain_ones(tmp_path, log):
    rep = diagnose(log.read_bytes())
    capture = _Capture()
    save(capture, rep, Redactor(), log.name)  # type: ignore[arg-type]
    assert capture.fields is not None
    plain, sent = Store(tmp_path / "plain.db"), Store(tmp_path / "sent.db")
    plain.record(**capture.fields)
    blobs = encoded(capture.fields)
    assert all(isinstance(blobs[k], bytes) for k in ("excerpt", "report", "document"))
    sent.record(**blobs)
    plain.close()
    sent.close()
    assert _rows(tmp_path / "sent.db") == _rows(tmp_path / "plain.db")
    assert _rows(tmp_path / "plain.db")["documents"]  # the parsed log was kept


def _each_pattern_in_turn(redactor: Redactor, text: str) -> str:
    """Redaction the plain way: after the pre-check, every pattern replaced in turn."""
    from tracelens.incidents.redact import _encodable, _sub

    text = _encodable(text)
    if text and redactor.precheck.search(text) is not None:
        for pattern in redactor.patterns:
            text = _sub(pattern, text)
    return text


def _texts() -> list[str]:
    from test_redaction import KINDS, PEM_BODY

    planted = [line.format(secret) for secret, line in KINDS.values()]
    pem = "\n".join(["-----BEGIN PRIVATE KEY-----", *PEM_BODY, "-----END PRIVATE KEY-----"])
    return [
        *planted,
        " and ".join(planted),  # every kind in one text
        "\n".join(planted),
        pem,
        PEM_BODY[0],
        f"x\n{PEM_BODY[0]}\ny",  # matched by the pre-check's multi-line ^ only
        "INFO 01-20 13:03:41 [engine.py:41] engine started",
        "bad byte \udcff here " + planted[0],
        "",
    ]


@pytest.mark.parametrize("missing_set", [False, True], ids=["set", "no-set"])
@pytest.mark.parametrize(
    "extra",
    [[], [r"merger plan \w+"], [r"\[REDACTED:hf-token\]"], [r"(?i-m)started$"]],
    ids=["builtin", "user", "user-matches-a-marker", "user-anchored"],
)
def test_only_the_patterns_a_text_holds_are_run_with_the_same_result(extra, missing_set):
    redactor = Redactor(extra)
    if missing_set:
        redactor.which = None
    texts = _texts()
    assert [redactor(t) for t in texts] == [_each_pattern_in_turn(redactor, t) for t in texts]
    assert redactor(texts[0]) != texts[0]  # something was redacted
