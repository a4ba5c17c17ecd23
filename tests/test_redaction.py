"""Redaction: every kind of secret, planted in every field a log feeds, reaches no output (the
database file and its WAL, JSON, --explain, tickets in every format); user patterns that would
shred everything are refused."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path
from urllib.parse import unquote

import pytest
from tiers import one_quick

from tracelens.cli import main
from tracelens.incidents.redact import Redactor, redact

PEM_BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
]
# kind -> (the secret, a log line carrying it); the secret values are made up
KINDS: dict[str, tuple[str, str]] = {
    "github-fine-grained": (
        "github_pat_11AZQXW7Y0a1b2c3d4e5f6_g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6A7B8C9D0E1F2G3H4",
        "git push https://x:{}@github.com/o/r.git",
    ),
    "github-classic": ("ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9876", "GITHUB={} gh auth login"),
    "slack": ("xoxb-2048204820-4096409640960-Q1w2E3r4T5y6U7i8O9p0AsDf", "posting alert with {}"),
    "google": ("AIzaSyD4x7Qm9Lp2Wn5Rt8Yv1Zb3Kc6Hj0Gf2Ed", "maps client key={}"),
    "jwt": (
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0cmFjZWxlbnMtdGVzdCJ9.c2lnbmF0dXJlLWJ5dGVzLWhlcmU",
        "session {} expired",
    ),
    "redis": ("r3disPa55wordQ9", "connecting to redis://:{}@cache.internal:6379/0"),
    "authorization-token": (
        "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
        "header Authorization: Token {}",
    ),
    "cookie": ("sessionid=c00kieSecretValue42", "request header Cookie: {}; theme=dark"),
    "url-token": (
        "t0kenInUrlValue123",
        "GET https://hooks.example.org/notify?channel=ops&token={}&x=1",
    ),
    "aws-session": (
        "IQoJb3JpZ2luX2VjEJrFAKEFAKEwEaCXVzLWVhc3QtMSJHMEUCIQD",
        "AWS_SESSION_TOKEN={} aws s3 cp",
    ),
    "azure": (
        "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
        "conn DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
    ),
    "hub-token": ("myHubTokenValue123456", "env HUGGING_FACE_HUB_TOKEN={} set"),
    "api-key-flag": ("sekr1tApiKeyFlagValue", "vllm serve m --api-key {} --port 8000"),
    "hf-token-flag": ("hfTokFlagValue998877", "sglang launch --hf-token={} --tp 2"),
    "vllm-args": (
        "vllmApiKeyInList1x",
        "non-default args: {{'model': 'm', 'api_key': ['{}'], 'port': 8000}}",
    ),
    "json-prompt": (
        "tell me the merger plan zq7",
        'body {{"model": "m", "prompt": "{}", "max_tokens": 16}}',
    ),
    "json-content": (
        "confidential chat zq8",
        'body {{"messages": [{{"role": "user", "content": "{}"}}]}}',
    ),
    "sglang-text": ("sglang private text zq9", "GenerateReqInput(text='{}', sampling_params={{}})"),
    "hf": ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "export HF_TOKEN={}"),
    "openai": ("sk-proj-Zq8mN3vB6xC1lK9jH4gF7dS2aP5oI0uY", "OPENAI_API_KEY={}"),
    "aws": ("AKIAZ7XQ4M2N8P6R3T5V", "aws_access_key_id {}"),
    "url-password": (
        "hunter2passQ",
        "pip install --index-url https://builder:{}@pypi.example/simple vllm",
    ),
    "custom": ("ACME-INTERNAL-77123", "ticket ref {}"),
}
CUSTOM = r"ACME-INTERNAL-\d+"
SELF_EVIDENT = {
    "github-fine-grained",
    "github-classic",
    "slack",
    "google",
    "hf",
    "openai",
    "aws",
    "custom",
}
"""Kinds recognisable without their context: also planted in the file name and a model path."""


def leaks(secret: str, text: str, window: int = 12) -> list[str]:
    """Pieces of the secret (any ``window`` characters in a row) found in text."""
    return sorted(
        {
            secret[i : i + window]
            for i in range(len(secret) - window + 1)
            if secret[i : i + window] in text
        }
    )


def planted_log(kind: str, where: str) -> str:
    """A crash no rule knows, with the secret in the exception message (title, message,
    signatures, evidence), in a context line, in the model path and the host (facts) and the
    file name, or straddling the cut of the title."""
    secret, line = KINDS[kind]
    carried = line.format(secret)
    pad = "x" * (290 - len("RuntimeError: ")) + " " if where == "title-cut" else ""
    model = f"/models/{secret}" if kind in SELF_EVIDENT else "/models/llama"
    host = f"node-{secret}" if kind in SELF_EVIDENT else "node-1"
    lines = [
        f"INFO 01-20 13:03:40 [api_server.py:100] args: vllm serve --model {model}",
        f"  host      : {host}",
        f"INFO 01-20 13:03:40 [utils.py:10] {carried}",
        "Traceback (most recent call last):",
        '  File "/app/tl_fixture/client.py", line 10, in connect_backend',
        "    open_channel(target)",
        f"RuntimeError: {pad}channel refused: {carried}",
        "INFO 01-20 13:03:41 [utils.py:12] shutting down",
    ]
    return "\n".join(lines) + "\n"


def _db_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    parts = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            for v in row:
                if isinstance(v, bytes):
                    try:
                        v = zlib.decompress(v).decode("utf-8", "replace")
                    except zlib.error:
                        v = v.decode("utf-8", "replace")
                parts.append(str(v))
    conn.close()
    return "\n".join(parts)


def _outputs(tmp_path: Path, log: Path, capsys) -> dict[str, str]:
    db = tmp_path / "incidents.db"
    sqlite3.connect(db).close()
    keep = sqlite3.connect(db)  # held open: the WAL stays on disk to be read
    keep.execute("PRAGMA journal_mode = WAL")
    out: dict[str, str] = {}
    redact_arg = ["--redact-regex", CUSTOM]

    def run(name: str, args: list[str]) -> None:
        capsys.readouterr()
        assert main(args) == 0, (name, capsys.readouterr().err)
        got = capsys.readouterr()
        out[name] = got.out + got.err

    run("ingest", ["ingest", "--db", str(db), *redact_arg, str(log)])
    run("diagnose-save", ["diagnose", "--save", "--db", str(db), *redact_arg, str(log)])
    del out["diagnose-save"]  # shows the user their own log: only what it stores counts here
    run("list-json", ["incidents", "list", "--db", str(db), "--format", "json"])
    run("show-json", ["incidents", "show", "1", "--db", str(db), "--format", "json"])
    run("show-explain", ["incidents", "show", "1", "--db", str(db), "--explain"])
    run("similar-json", ["similar", str(log), "--db", str(db), "--format", "json"])
    for fmt in ("markdown", "jira", "json", "github-url"):
        repo = ["--repo", "o/r"] if fmt == "github-url" else []
        run(
            f"ticket-id-{fmt}",
            ["ticket", "1", "--db", str(db), "--format", fmt, *repo, *redact_arg],
        )
        run(f"ticket-file-{fmt}", ["ticket", str(log), "--format", fmt, *repo, *redact_arg])
        out[f"ticket-id-{fmt}"] = unquote(out[f"ticket-id-{fmt}"])
        out[f"ticket-file-{fmt}"] = unquote(out[f"ticket-file-{fmt}"])
    out["db-rows"] = _db_text(db)
    out["db-file"] = db.read_bytes().decode("utf-8", "replace")
    wal = db.with_name(db.name + "-wal")
    out["db-wal"] = wal.read_bytes().decode("utf-8", "replace") if wal.exists() else ""
    keep.close()
    return out


# each kind of secret goes through fifteen commands: the quick tier plants one kind in four,
# ``--full`` every kind
@pytest.mark.parametrize("where", ["message", "title-cut"])
@pytest.mark.parametrize("kind", one_quick(sorted(KINDS), keep=tuple(range(0, len(KINDS), 4))))
def test_no_planted_secret_reaches_any_output(tmp_path, capsys, kind, where):
    secret = KINDS[kind][0]
    name = f"crash-{secret}.log" if kind in SELF_EVIDENT else "crash.log"
    log = tmp_path / name
    log.write_text(planted_log(kind, where))
    outputs = _outputs(tmp_path, log, capsys)
    assert "[REDACTED:" in outputs["db-rows"]
    found = {sink: leaks(secret, text) for sink, text in outputs.items() if leaks(secret, text)}
    assert found == {}


def test_the_planted_log_carries_the_secret_unredacted(tmp_path, capsys):
    """The control: with --no-redact the same log stores every secret (the planting works)."""
    db = tmp_path / "incidents.db"
    for kind in sorted(KINDS):
        log = tmp_path / f"{kind}.log"
        log.write_text(planted_log(kind, "message"))
        assert main(["ingest", "--no-redact", "--db", str(db), str(log)]) == 0
    text = _db_text(db)
    assert [k for k, (secret, _) in KINDS.items() if secret not in text] == []
    hosts = [r[0] for r in sqlite3.connect(db).execute("SELECT host FROM occurrences")]
    assert any(KINDS["hf"][0] in (h or "") for h in hosts)  # the host field is planted too


def test_private_key_body_is_dropped_when_its_begin_line_is_outside_the_excerpt(tmp_path):
    body = PEM_BODY * 20
    lines = ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    lines += [
        "Traceback (most recent call last):",
        '  File "/app/tl_fixture/keys.py", line 3, in load_key',
        "    parse(k)",
        "ValueError: key rejected",
    ]
    log = tmp_path / "k.log"
    log.write_text("\n".join(body[:3] + lines) + "\n")  # a stray body before, a whole block too
    db = tmp_path / "incidents.db"
    assert main(["ingest", "--db", str(db), str(log)]) == 0
    text = _db_text(db)
    assert [p for p in PEM_BODY if p in text] == []


@pytest.mark.parametrize("pattern", ["", " ", ".*", ".+", r"\w+", r"\S+", "x*", "(?s).", "[^@]+"])
def test_redact_regex_that_would_match_everything_is_refused(tmp_path, capsys, pattern):
    log = tmp_path / "a.log"
    log.write_text(planted_log("hf", "message"))
    assert main(["ticket", str(log), "--redact-regex", pattern]) == 2
    err = capsys.readouterr().err
    assert "--redact-regex" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "pattern,text,expected",
    [
        (r"ACME-\d+", "id ACME-42 here", "id [REDACTED:custom-1] here"),
        (r"corp\.internal", "host a.corp.internal", "host a.[REDACTED:custom-1]"),
    ],
)
def test_narrow_redact_regex_is_accepted(pattern, text, expected):
    assert Redactor([pattern])(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "INFO 01-20 13:03:41 [engine.py:41] max_tokens=4096 prompt_tokens: 12 num_tokens=5",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "sha 0123456789abcdef (short hashes stay)",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


@pytest.mark.slow
def test_no_planted_secret_reaches_the_terminal_ui(tmp_path):
    """The TUI of stored incidents, one for each kind of secret: the list, each incident's
    diagnosis screen and every tab. One app run goes through all of them (a diagnosis screen
    costs about 0.4 s of CPU to open, nearly all of it Textual styling its widgets). The screens are
    read as text (a screenshot's SVG writes spaces as ``&#160;``: a secret with spaces, such
    as a prompt, could never be found in it); each must show the line that carried the
    secret, so that a secret left in it would be seen."""
    from tui_fixtures import run, screen_text

    from tracelens.tui import make_app

    db = tmp_path / "incidents.db"
    kinds = sorted(KINDS)
    logs = []
    for k, kind in enumerate(kinds):
        log = tmp_path / f"crash-{k:02d}.log"
        # a frame of its own per kind: one incident each
        log.write_text(planted_log(kind, "message").replace("connect_backend", f"connect_{k}"))
        logs.append(str(log))
    args = ["ingest", "--db", str(db), "--redact-regex", CUSTOM, "--jobs", "1", *logs]
    assert main(args) == 0
    assert sqlite3.connect(db).execute("SELECT count(*) FROM incidents").fetchone()[0] == len(kinds)
    tabs = ["diagnosis", "log", "traceback", "facts", "similar"]
    shots: dict[int, dict[str, str]] = {}
    tabs_seen: dict[int, list[str]] = {}

    async def steps(pilot, app) -> None:
        from textual.widgets import TabbedContent

        shots[0] = {"list": screen_text(app)}
        for incident in range(1, len(kinds) + 1):
            app.open_incident(incident)
            await pilot.pause()
            shots[incident], tabs_seen[incident] = {}, []
            for key, tab in zip("12345", tabs):  # every tab of the diagnosis screen, by its key
                if key != "1":  # the screen opens on the first
                    await pilot.press(key)
                    await pilot.pause()
                tabs_seen[incident].append(app.screen.query_one(TabbedContent).active)
                shots[incident][tab] = screen_text(app)
            # the next incident opens over this one: going back to the list in between would
            # draw it again each time (a tenth of the test's time) and show nothing new

    run(make_app(db_path=db), steps, size=(160, 50))
    assert len(shots) == len(kinds) + 1
    assert all(seen == tabs for seen in tabs_seen.values()), tabs_seen
    for incident, kind in enumerate(kinds, start=1):
        screens = shots[incident]
        assert f"crash-{incident - 1:02d}.log" in screens["diagnosis"], incident
        before = KINDS[kind][1].format("\0").split("\0")[0]  # the line up to the secret
        carried = "channel refused: " + before.rstrip("\"'[")  # (its quote may be redacted)
        shown = [tab for tab in tabs if carried in screens[tab]]
        assert shown == ["diagnosis", "log", "traceback"], (kind, shown)
        assert all(fact in screens["facts"] for fact in ("host", "model_path")), kind
    everything = "\n".join(text for screens in shots.values() for text in screens.values())
    assert {
        kind: leaks(KINDS[kind][0], everything)
        for kind in kinds
        if leaks(KINDS[kind][0], everything)
    } == {}


def _batches() -> list[list[str]]:
    """Texts redacted together: secrets at the start, middle and end of the batch, a private
    key whose BEGIN and END lines are different texts, texts with line breaks of their own,
    lone surrogates (bytes that were not UTF-8), empty texts."""
    planted = [line.format(secret) for secret, line in KINDS.values()]
    ordinary = ["INFO 01-20 13:03:41 [engine.py:41] engine started", "", '  File "x.py", line 3']
    pem = ["-----BEGIN PRIVATE KEY-----", *PEM_BODY, "-----END PRIVATE KEY-----"]
    return [
        ordinary,
        [*planted, *ordinary],
        [*ordinary, *planted],
        [x for pair in zip(ordinary * 9, planted) for x in pair],
        [*ordinary, *pem, *ordinary],
        [*ordinary, "\n".join(pem), "two\nlines " + planted[0]],
        [*ordinary, "bad byte \udcff here", planted[1]],
        [planted[2]],
    ]


@pytest.mark.parametrize("extra", [[], [r"merger plan \w+"], [r"\Aengine"], [r"(?i-m)started$"]])
@pytest.mark.parametrize("batch", range(len(_batches())))
def test_redacting_many_texts_at_once_equals_redacting_each(batch, extra):
    texts = _batches()[batch]
    redactor = Redactor(extra)
    assert redactor.many(texts) == [redactor(t) for t in texts]
    learned = redactor.learned(texts)  # secrets seen in full, also removed in other forms
    cut = [t[: len(t) // 2] + "…" for t in texts]
    assert learned.many(texts + cut) == [learned(t) for t in texts + cut]


def test_redacting_many_texts_scans_them_once(monkeypatch):
    redactor = Redactor()
    texts = ["INFO ok"] * 500 + ["export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12"]
    calls = []
    original = Redactor.__call__
    monkeypatch.setattr(Redactor, "__call__", lambda self, t: calls.append(t) or original(self, t))
    out = redactor.many(texts)
    assert calls == texts[-1:]  # only the text with a secret is redacted on its own
    assert out[-1] == "export HF_TOKEN=[REDACTED:hf-token]" and out[:-1] == texts[:-1]
