"""The parsed log stored with an incident (for the TUI's log and traceback tabs): it comes back
whole and redacted, a long log keeps the lines around its failure, and an older store upgrades
to keep it."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from test_store import SECRETS, planted_log

from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.logdoc import (
    document_of,
    load_document,
    records_of,
    redacted_texts,
    stored_document,
    tracebacks_of,
)
from tracelens.incidents.redact import Redactor
from tracelens.incidents.store import MIGRATIONS, Store
from tracelens.models import Record

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
RANKS = ROOT / "corpus" / "incidents" / "docker-compose-torchrun-ddp-nccl-shm-no-space.log"


@pytest.mark.parametrize("log", [SEED, RANKS], ids=["vllm-tp8", "torchrun-ranks"])
def test_the_whole_log_and_its_tracebacks_come_back(tmp_path, log):
    rep = diagnose(log.read_bytes(), source=log.name)
    store = Store(tmp_path / "i.db")
    rec = save(store, rep, Redactor(), log.name)
    data = load_document(store, rec.incident_id)
    assert data is not None and not data["cut"]
    records = records_of(data)
    assert [(r.line, r.stream, r.level, r.text) for r in records] == [
        (r.line, r.stream, r.level, r.text) for r in rep.document.records
    ]
    assert [
        (t.start_line, t.streams, t.exception.type if t.exception else None)
        for t in tracebacks_of(data)
    ] == [
        (t.start_line, t.streams, t.exception.type if t.exception else None)
        for t in rep.document.tracebacks
    ]
    assert data["failure_line"] == rep.document.failure_line > 0
    # only the lines are kept: the rest is parsed again from them when read
    assert "document" not in data and data["version"] == 2
    doc = document_of(data, log.name)
    live = rep.document
    assert [(e.line, e.text) for e in doc.errors] == [(e.line, e.text) for e in live.errors]
    assert [(f.name, f.value) for f in doc.facts] == [(f.name, f.value) for f in live.facts]
    assert (doc.line_count, doc.size, doc.failure_line) == (
        live.line_count,
        live.size,
        live.failure_line,
    )


def test_a_parsed_document_stored_by_version_1_reads_as_it_was_stored(tmp_path):
    from tracelens.incidents.records import decode_report, encode_report, report_data
    from tracelens.models import to_dict

    rep = diagnose(RANKS.read_bytes(), source=RANKS.name)
    data = stored_document(rep, Redactor(enabled=False))
    v1 = {k: data[k] for k in ("records", "cut", "line_count", "failure_line")}
    v1["version"] = 1
    v1["document"] = to_dict(rep.document)
    v1["document"]["errors"] = []  # what it kept is what comes back, not a new parse
    back = decode_report(encode_report(report_data(rep)), v1)
    assert back is not None
    assert back.document.errors == [] and rep.document.errors
    assert [t.start_line for t in back.document.tracebacks] == [
        t.start_line for t in rep.document.tracebacks
    ]
    assert len(back.document.records) == len(rep.document.records)
    assert back.document.failure_line == rep.document.failure_line


def _stored_text(db: Path) -> str:
    store = Store(db)
    return "\n".join(zlib.decompress(row["data"]).decode() for row in store.db["documents"].rows)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_planted_secret_is_not_in_the_stored_log(tmp_path, name):
    log = planted_log()
    rep = diagnose(log.encode(), source="secret.log")
    db = tmp_path / "i.db"
    save(Store(db), rep, Redactor([r"ACME-INTERNAL-\d+"]), "secret.log")
    text = _stored_text(db)
    assert "[REDACTED:" in text
    for part in SECRETS[name].splitlines():
        assert part not in text


def test_without_redaction_the_secrets_are_stored(tmp_path):
    """The control for the test above: the stored log does hold every line."""
    rep = diagnose(planted_log().encode(), source="secret.log")
    db = tmp_path / "i.db"
    save(Store(db), rep, Redactor(enabled=False), "secret.log")
    text = _stored_text(db)
    assert all(p in text for s in SECRETS.values() for p in s.splitlines())


@pytest.mark.parametrize(
    ("texts", "extra", "expected"),
    [
        (["a", "password=abcdef123456", "b"], [], ["a", "password=[REDACTED:secret]", "b"]),
        # a pattern whose match takes a line break: those lines are redacted one by one
        (["x", "y", "c"], [r"x\sy"], ["x", "y", "c"]),
        (
            ["-----BEGIN RSA PRIVATE KEY-----", "abc", "-----END RSA PRIVATE KEY-----", "d"],
            [],
            ["[REDACTED:private-key]"] * 3 + ["d"],
        ),
    ],
    ids=["one-line", "across-lines", "private-key"],
)
def test_redacted_texts_keep_one_text_per_line(texts, extra, expected):
    records = [Record(line=k + 1, text=t) for k, t in enumerate(texts)]
    assert redacted_texts(records, Redactor(extra), chunk=8) == expected


@pytest.mark.parametrize("limit", [2_000, 10_000])
def test_a_long_log_keeps_the_lines_around_its_failure(limit):
    rep = diagnose(SEED.read_bytes(), source=SEED.name)
    data = stored_document(rep, Redactor(), limit=limit)
    lines = [row[0] for row in data["records"]]
    assert data["cut"]
    assert sum(len(row[3]) for row in data["records"]) <= limit
    assert lines[0] <= rep.document.failure_line <= lines[-1]
    assert lines == list(range(lines[0], lines[-1] + 1))


def test_an_older_store_upgrades_and_keeps_its_incidents(tmp_path):
    db = tmp_path / "old.db"
    old = Store(db, migrations=MIGRATIONS[:4])
    rep = diagnose(SEED.read_bytes(), source=SEED.name)
    old.record(
        fingerprint="f1",
        signature="s",
        fingerprint_fine="ff",
        signature_fine="sf",
        title="stored before",
        category="gpu-oom",
        rule_id="torch/gpu-oom",
        severity="error",
        exception_type="E",
        message="m",
        source="a.log",
        host=None,
        excerpt="1: old excerpt",
        report={},
    )
    assert "documents" not in old.db.table_names()
    old.close()
    new = Store(db)
    assert new.schema_version == len(MIGRATIONS) and "documents" in new.db.table_names()
    assert load_document(new, 1) is None  # stored before: it keeps its excerpt only
    rec = save(new, rep, Redactor(), SEED.name)
    assert load_document(new, rec.incident_id) is not None


@pytest.mark.parametrize("seen", [5, 2])
def test_an_incident_keeps_the_parsed_logs_of_its_newest_occurrences(tmp_path, seen):
    from tracelens.incidents.store import DOCUMENTS_KEPT

    rep = diagnose(SEED.read_bytes(), source=SEED.name)
    store = Store(tmp_path / "i.db")
    # stored out of order: the newest by the time they were seen are kept
    days = [3, 1, 5, 2, 4][:seen]
    for day in days:
        save(store, rep, Redactor(), f"day{day}.log", seen_at=f"2026-01-0{day}T00:00:00+00:00")
    kept = [
        row[0]
        for row in store.db.execute(
            "SELECT occurrences.source FROM documents JOIN occurrences"
            " ON occurrences.id = documents.occurrence_id ORDER BY occurrences.seen_at DESC"
        )
    ]
    assert kept == [f"day{d}.log" for d in sorted(days, reverse=True)[:DOCUMENTS_KEPT]]
    assert load_document(store, 1) is not None
