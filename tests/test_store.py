"""The incident store: migrations, repeats, concurrency, crash safety, redaction, similar
search, tickets, and the CLI's JSON for scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path
from urllib.parse import unquote

import pytest

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.similar import attach_similar, similar
from tracelens.incidents.store import MIGRATIONS, Store
from tracelens.incidents.ticket import GITHUB_URL_LIMIT, render_ticket

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"
OOM = ROOT / "corpus" / "captured" / "gpu" / "oom-batch-too-large.log"
HEALTHY = ROOT / "corpus" / "healthy" / "vllm-serve-healthy.log"


@pytest.fixture()
def db(tmp_path, monkeypatch):
    path = tmp_path / "incidents.db"
    monkeypatch.setenv("TRACELENS_DB", str(path))
    return path


def test_same_crash_twice_is_one_incident(db):
    store = Store(db)
    rep = diagnose(SEED.read_bytes())
    first = save(store, rep, Redactor(), "a.log")
    second = save(store, rep, Redactor(), "b.log")
    assert first.new and not second.new and first.incident_id == second.incident_id
    inc = store.incident(first.incident_id)
    assert inc.count == 2 and inc.occurrences is not None and len(inc.occurrences) == 2
    assert save(store, diagnose(HEALTHY.read_bytes()), Redactor(), "h.log") is None


def test_older_database_upgrades_without_loss(db):
    old = Store(db, migrations=MIGRATIONS[:1])
    assert old.schema_version == 1
    old.db["incidents"].insert(
        {
            "fingerprint": "f1",
            "signature": "s",
            "title": "kept",
            "category": "gpu-oom",
            "first_seen": "2025-01-01",
            "last_seen": "2025-01-01",
            "count": 3,
            "status": "open",
        }
    )
    old.close()
    new = Store(db)
    assert new.schema_version == len(MIGRATIONS)
    rows = new.incidents()
    assert [(r.title, r.count) for r in rows] == [("kept", 3)]
    assert "severity" in new.db["incidents"].columns_dict
    assert [r.title for r in new.incidents(search="kept")] == ["kept"]


def test_newer_database_is_refused(db):
    Store(db).db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    with pytest.raises(Exception, match="newer tracelens"):
        Store(db)


def _ingest_proc(db: Path, files: list[Path]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tracelens",
            "ingest",
            "--recount",
            "--db",
            str(db),
            *map(str, files),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )


def test_two_processes_ingesting_at_once_lose_nothing(db, tmp_path):
    logs = sorted((ROOT / "corpus" / "captured" / "gpu").glob("*.log"))[:12]
    a = _ingest_proc(db, logs * 2)
    b = _ingest_proc(db, logs * 2)
    assert a.wait(timeout=300) == 0, a.stderr.read()
    assert b.wait(timeout=300) == 0, b.stderr.read()
    store = Store(db)
    occurrences = store.db["occurrences"].count
    failing = sum(
        1
        for f in logs
        if diagnose(f.read_bytes()).diagnoses or diagnose(f.read_bytes()).document.errors
    )
    assert occurrences == 4 * failing
    assert sum(r.count for r in store.incidents(limit=10_000)) == occurrences
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_crash_mid_ingest_leaves_the_database_consistent(db):
    Store(db).close()
    code = f"""
import os
from tracelens.incidents.store import Store
s = Store({str(db)!r})
s.db.conn.execute("BEGIN IMMEDIATE")
s.db["incidents"].insert({{"fingerprint": "half", "first_seen": "x", "last_seen": "x", "count": 1, "status": "open"}})
os._exit(9)  # dies inside the transaction
"""
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT)
    assert p.returncode == 9
    store = Store(db)
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert store.incidents() == []
    save(store, diagnose(SEED.read_bytes()), Redactor(), "after.log")
    assert len(store.incidents()) == 1


SECRETS = {
    "hf": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "openai": "sk-proj-Zq8mN3vB6xC1lK9jH4gF7dS2aP5oI0uY",
    "anthropic": "sk-ant-api03-Qw3rTy6UiOp9AsDfGhJkLzXcVbNm12",
    "aws": "AKIAZ7XQ4M2N8P6R3T5V",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0cGF5bG9hZA.sig123",
    "urlpass": "hunter2pass",
    "basic": "YnVpbGRlcjpzM2NyZXQtYmFzaWM=",
    "awssecret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "completion": "the merger closes on friday at noon",
    "prompt": "please summarise our confidential merger plan",
    "key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "custom": "ACME-INTERNAL-77123",
}


def planted_log() -> str:
    base = SEED.read_text()
    lines = base.splitlines()
    extra = [
        f"export HF_TOKEN={SECRETS['hf']}",
        f"OPENAI_API_KEY={SECRETS['openai']} ANTHROPIC_API_KEY={SECRETS['anthropic']}",
        f"aws configure set aws_access_key_id {SECRETS['aws']}",
        f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' http://10.0.0.5:8000/v1/models",
        f"proxy auth header: Authorization: Basic {SECRETS['basic']}",
        f"aws_secret_access_key = {SECRETS['awssecret']}",
        f"(APIServer pid=1) INFO 01-20 13:03:42 [logger.py:72] Generated response chatcmpl-1: output: '{SECRETS['completion']}', output_token_ids: [5, 6], finish_reason: stop",
        f"pip install --index-url https://builder:{SECRETS['urlpass']}@pypi.internal.example/simple vllm",
        f"(APIServer pid=1) INFO 01-20 13:03:41 [logger.py:41] Received request chatcmpl-1: prompt: '{SECRETS['prompt']}', params: SamplingParams(n=1), prompt_token_ids: [1, 2], lora_request: None.",
        *SECRETS["key"].splitlines(),
        f"ticket ref {SECRETS['custom']}",
    ]
    # right around the first evidence line, so that all of them land in the stored excerpt
    idx = next(i for i, text in enumerate(lines) if "No valid attention backend" in text)
    return "\n".join(lines[:idx] + extra[:6] + [lines[idx]] + extra[6:] + lines[idx + 1 :]) + "\n"


def test_planted_secrets_reach_neither_database_nor_ticket(db, tmp_path, capsys):
    log = tmp_path / "secret.log"
    log.write_text(planted_log())
    assert (
        main(
            [
                "diagnose",
                "--save",
                "--db",
                str(db),
                "--redact-regex",
                r"ACME-INTERNAL-\d+",
                str(log),
            ]
        )
        == 0
    )
    raw = db.read_bytes()
    store = Store(db)
    dump = []
    for table in ("incidents", "occurrences", "tickets"):
        for row in store.db[table].rows:
            for v in row.values():
                dump.append(zlib.decompress(v).decode() if isinstance(v, bytes) else str(v))
    text = "\n".join(dump)
    for name, secret in SECRETS.items():
        for part in secret.splitlines():
            assert part not in text, name
            assert part.encode() not in raw, name
    assert "[REDACTED:" in text
    capsys.readouterr()
    for fmt in ("markdown", "jira", "json"):
        assert (
            main(["ticket", str(log), "--format", fmt, "--redact-regex", r"ACME-INTERNAL-\d+"]) == 0
        )
        out = capsys.readouterr().out
        for name, secret in SECRETS.items():
            for part in secret.splitlines():
                assert part not in out, (fmt, name)
    assert main(["ticket", "1", "--db", str(db), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert all(p not in out for s in SECRETS.values() for p in s.splitlines())


def test_no_redact_keeps_text(db, tmp_path):
    log = tmp_path / "secret.log"
    log.write_text(planted_log())
    assert main(["diagnose", "--save", "--no-redact", "--db", str(db), str(log)]) == 0
    excerpt = Store(db).latest_occurrence(1).excerpt.numbered()
    # the control for the redaction test: unredacted, every planted secret is in the excerpt
    for name, secret in SECRETS.items():
        assert all(part in excerpt for part in secret.splitlines()), name


def test_similar_ranks_the_same_failure_first(db):
    store = Store(db)
    # one in four of the captured GPU logs (each kind of failure is there several times) and
    # the one searched for
    logs = sorted((ROOT / "corpus" / "captured" / "gpu").glob("*.log"))[1::4]
    assert OOM not in logs and len(logs) > 20
    for f in [*logs, OOM]:
        save(store, diagnose(f.read_bytes()), Redactor(), f.name)
    hits = similar(store, diagnose(OOM.read_bytes()))
    assert hits and hits[0].category == "gpu-oom" and hits[0].score >= 90


def test_attach_similar_reads_an_existing_store_and_never_creates_one(db, tmp_path):
    missing = tmp_path / "none" / "incidents.db"
    rep = attach_similar(diagnose(OOM.read_bytes()), missing)
    assert rep.similar == [] and not missing.exists() and not missing.parent.exists()
    store = Store(db)
    save(store, diagnose(OOM.read_bytes()), Redactor(), "first.log")
    store.close()
    rep = attach_similar(diagnose(OOM.read_bytes()), db, limit=1)
    assert [h.category for h in rep.similar] == ["gpu-oom"]


def test_incident_workflow_and_json_for_scripts(db, capsys):
    assert main(["ingest", "--db", str(db), str(SEED), str(OOM), str(HEALTHY)]) == 0
    capsys.readouterr()
    assert main(["incidents", "list", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2
    for key in (
        "id",
        "fingerprint",
        "title",
        "category",
        "rule_id",
        "count",
        "first_seen",
        "last_seen",
        "status",
    ):
        assert key in rows[0]
    seed_id = next(r["id"] for r in rows if r["rule_id"] == "vllm/attention/mla-fp8-kv-unsupported")
    assert (
        main(
            [
                "incidents",
                "resolve",
                str(seed_id),
                "--db",
                str(db),
                "--remedy",
                "2",
                "--note",
                "removed the keys",
            ]
        )
        == 0
    )
    assert main(["incidents", "attach", str(seed_id), "OPS-1234", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["incidents", "show", str(seed_id), "--db", str(db), "--format", "json"]) == 0
    inc = json.loads(capsys.readouterr().out)
    assert inc["status"] == "resolved" and inc["remedy_worked"].startswith(
        "Remove kv_cache_quant_algo"
    )
    assert inc["tickets"][0]["ref"] == "OPS-1234"
    assert main(["incidents", "show", str(seed_id), "--db", str(db), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "coarse" in out and "vllm/attention/mla-fp8-kv-unsupported |" in out
    assert (
        main(
            [
                "incidents",
                "list",
                "--db",
                str(db),
                "--status",
                "resolved",
                "--search",
                "keys",
                "--format",
                "json",
            ]
        )
        == 0
    )
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [seed_id]
    assert main(["similar", str(SEED), "--db", str(db), "--format", "json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["id"] == seed_id and hits[0]["remedy_worked"] and "score" in hits[0]
    assert main(["diagnose", str(SEED), "--db", str(db)]) == 0
    assert "Similar past incidents" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,needle",
    [
        (["incidents", "show", "999"], "no incident 999"),
        (["incidents", "resolve", "1", "--remedy", "99"], "is not one"),
        (["ticket", "1", "--format", "github-url"], "needs --repo"),
    ],
)
def test_store_errors_are_one_line(db, capsys, args, needle):
    main(["ingest", "--db", str(db), str(SEED)])
    capsys.readouterr()
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_missing_database_is_a_clear_error(tmp_path, capsys):
    assert main(["incidents", "list", "--db", str(tmp_path / "none.db")]) == 2
    assert "no incident database yet" in capsys.readouterr().err


def test_ticket_fences_survive_backticks_and_url_fits():
    from tracelens.incidents.records import Excerpt, ExcerptLine

    data = diagnose(SEED.read_bytes())
    excerpt = Excerpt(
        lines=[
            ExcerptLine(line=k, text="line with ``` fence and ```` more", origin=True)
            for k in range(1, 3001)
        ]
    )
    md = render_ticket("markdown", data, excerpt)
    assert "`````text" in md
    url = render_ticket("github-url", data, excerpt, repo="vllm-project/vllm")
    assert url.startswith("https://github.com/vllm-project/vllm/issues/new?title=")
    assert len(url) <= GITHUB_URL_LIMIT
    assert "Root cause" in unquote(url)


HANDLED = [
    "manual-batch-size-search-oom-caught-ok.log",  # an OOM caught by a batch-size search
]


@pytest.mark.parametrize("name", HANDLED)
def test_a_healthy_log_with_handled_tracebacks_stores_no_incident(tmp_path, name):
    """A log with no diagnosis shows no failure (a failure always gets one, 'unrecognized' at
    worst): its handled tracebacks are not an incident, for ingest or for --save."""
    log = Path(__file__).resolve().parent.parent / "corpus" / "healthy" / name
    assert "CUDA out of memory" in log.read_text()
    db = tmp_path / "i.db"
    assert main(["ingest", str(log), "--db", str(db), "--jobs", "1"]) == 0
    assert main(["incidents", "list", "--db", str(db), "--format", "json"]) in (0, 2)
    from tracelens.incidents.store import Store

    assert not db.exists() or Store(str(db)).count() == 0
