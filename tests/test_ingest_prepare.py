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


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_an_excerpt_is_encoded_as_its_plain_dict(log):
    from tracelens.incidents.incident import excerpt
    from tracelens.incidents.records import excerpt_dict
    from tracelens.models import to_dict

    ex = excerpt(diagnose(log.read_bytes()), Redactor())
    assert ex.lines and excerpt_dict(ex) == to_dict(ex)
    assert list(excerpt_dict(ex)) == list(to_dict(ex))  # the same key order in the JSON


@pytest.mark.parametrize(
    "value, same",
    [
        ({"a": ["x", {"b": "y"}], "n": 3}, True),
        ({"a": ["x", {"b": "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12"}]}, False),
        (["ok", "vllm serve m --api-key abc123secret --port 8000", None], False),
    ],
)
def test_redact_value_copies_only_what_it_changes(value, same):
    from tracelens.incidents.incident import redact_value

    out = redact_value(value, Redactor())
    assert (out is value) == same
    assert _texts_of(out) == [Redactor()(t) for t in _texts_of(value)]


def _texts_of(value) -> list[str]:
    from tracelens.incidents.incident import _strings

    texts: list[str] = []
    _strings(value, texts)
    return texts


@pytest.mark.parametrize(
    "message",
    [
        "CUDA error: an illegal memory access at 0x7f3a2b7fe640",
        "login failed for --api-key abc123secret",
    ],
)
def test_signature_texts_are_redacted_the_same_way_when_redaction_changes_nothing(message):
    from tracelens.incidents.signature import signature

    log = f'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n    g()\nRuntimeError: {message}\n'
    doc = diagnose(log).document
    redactor = Redactor()
    sig = signature(doc, None, redactor)
    plain = signature(doc, None)
    assert sig is not None and plain is not None
    assert (sig.coarse, sig.fine) == (plain.coarse, plain.fine)
    secret = "abc123secret" in message
    # the clear texts are those of the log when redaction changes nothing in the message
    assert (sig.fine_text == plain.fine_text) != secret
    assert "abc123secret" not in sig.fine_text + sig.coarse_text


@pytest.mark.parametrize(
    "cond, log, holds",
    [
        ({"line": "CUDA out of memory"}, "x\nCUDA out of memory here\n", True),
        ({"line": "CUDA out of memory"}, "all fine\n", False),
        ({"exception": {"type": "RuntimeError"}}, "RuntimeError: boom\n", True),
        ({"exception": {"type": "ValueError"}}, "RuntimeError: boom\n", False),
    ],
)
def test_a_note_or_remedy_condition_is_compiled_once_and_answers_the_same(cond, log, holds):
    from tracelens.models import adapter
    from tracelens.rulebook.conditions import Context, compile_condition, compiled
    from tracelens.rulebook.model import Condition

    when = adapter(Condition).validate_python(cond)
    other = adapter(Condition).validate_python(cond)
    assert compiled(when) is compiled(when)
    assert compiled(other) is not compiled(when)  # an equal condition elsewhere: its own
    ctx = Context(diagnose(log).document)
    assert (compiled(when)(ctx) is not None) == (compile_condition(when)(ctx) is not None) == holds


def _learned_the_plain_way(redactor: Redactor, sources: list[str]) -> list[tuple[str, str]]:
    """The forms :meth:`Redactor.learned` keeps, each source checked and read on its own."""
    from urllib.parse import quote, quote_plus

    from tracelens.incidents.redact import MARK, _encodable
    from tracelens.parse.normalize import normalize

    forms: dict[str, str] = {}
    for text in filter(None, sources):
        text = _encodable(text)
        if redactor.precheck.search(text) is None:
            continue
        for pattern in redactor.patterns:
            for m in pattern.regex.finditer(text):
                secret = m.group(pattern.group)
                if len(secret) < 6 or secret.startswith("[REDACTED:"):
                    continue
                for form in {secret, normalize(secret)}:
                    for shown in (form, quote_plus(form), quote(form, safe="")):
                        if sum(c.isalnum() for c in shown.replace("<n>", "")) >= 6:
                            forms.setdefault(shown, MARK.format(pattern.kind))
    return sorted(forms.items(), key=lambda kv: -len(kv[0]))


@pytest.mark.parametrize("missing_set", [False, True], ids=["set", "no-set"])
@pytest.mark.parametrize("extra", [[], [r"merger plan \w+"], [r"\Aengine"]])
def test_secrets_are_learned_from_all_sources_at_once_as_from_each(extra, missing_set):
    redactor = Redactor(extra)
    if missing_set:
        redactor.which = None
    sources = _texts()
    learned = redactor.learned(sources)
    assert learned._forms == _learned_the_plain_way(redactor, sources)
    assert learned._forms  # secrets were found


def test_a_process_that_ingests_reads_envelopes_combined_from_its_first_line():
    from tracelens.fleet.work import Settings, setup
    from tracelens.read import logread

    setup(Settings())
    assert logread._lines_read >= logread._COMBINE_AFTER
    line = "(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] boom"
    assert logread._COMBINED.peel(line, 1) == logread.peel(line, 1)


def test_a_pool_parent_makes_what_its_workers_share_before_it_forks():
    from tracelens.fleet import work
    from tracelens.read import logread

    settings = work.Settings()
    work.preload(settings)
    rules = work._state["rules"]
    assert rules._index_prefilter()._set  # the RE2 set, not built again in each worker
    assert set(logread._COMBINED) >= set(logread._BY_FIRST)  # every combined regex compiled
    work.setup(settings)  # a forked worker's initializer: nothing made again
    assert work._state["rules"] is rules
    line = "(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] boom"
    assert logread._COMBINED.peel(line, 1) == logread.peel(line, 1)


def test_a_pool_leaves_what_its_workers_inherit_out_of_their_collections_and_no_longer():
    import gc

    from tracelens.fleet import pool, work

    frozen = gc.get_freeze_count()
    outcomes = pool.diagnose_all([str(p) for p in LOGS[:3]], work.Settings(), 2)
    first = next(outcomes)  # the workers are forked by now
    assert gc.get_freeze_count() > frozen
    rest = list(outcomes)
    assert [o.source for o in [first, *rest]] == [str(p) for p in LOGS[:3]]
    assert gc.get_freeze_count() == frozen  # the parent's own objects collected again


def test_a_pool_is_at_work_when_diagnose_all_returns_and_close_stops_it():
    # ingest opens and checks the store while the workers diagnose; a store that fails its
    # check closes the outcomes unread, which stops the workers
    import gc

    from tracelens.fleet import pool, work

    frozen = gc.get_freeze_count()
    outcomes = pool.diagnose_all([str(p) for p in LOGS[:40]], work.Settings(), 2)
    procs = list(outcomes._pool._processes.values())  # type: ignore[attr-defined]
    assert len(procs) == 2 and all(p.is_alive() for p in procs)
    outcomes.close()
    assert not any(p.is_alive() for p in procs)
    assert gc.get_freeze_count() == frozen
    outcomes.close()  # twice: nothing more to do


def test_one_process_reads_as_the_outcomes_are_taken():
    from tracelens.fleet import pool, work

    outcomes = pool.diagnose_all([str(p) for p in LOGS[:2]], work.Settings(), 1)
    assert [o.source for o in outcomes] == [str(p) for p in LOGS[:2]]
