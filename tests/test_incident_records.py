"""One report model everywhere: a report stored with an incident loads back into the model a
live diagnosis gives and renders the same; incidents, occurrences and tickets are records; the
excerpt is structured lines, and an older store's "N: text" excerpts are converted."""

from __future__ import annotations

import dataclasses
import json
import zlib
from pathlib import Path

import pytest

from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.records import (
    Candidate,
    Excerpt,
    ExcerptLine,
    Incident,
    IncidentRow,
    Occurrence,
    TicketLink,
    incident_dict,
    load_report,
    parse_numbered,
)
from tracelens.incidents.redact import Redactor
from tracelens.incidents.similar import similar
from tracelens.incidents.store import MIGRATIONS, Store
from tracelens.models import Diagnosis, Document, Fact, Record, Report, SimilarIncident
from tracelens.render import FORMATS, render
from tracelens.render.jsonout import report_dict

ROOT = Path(__file__).resolve().parent.parent
LOGS = [
    "incidents/the-fp8-kv-cache-wall.log",
    "incidents/torchrun-8gpu-fsdp-oom-rank3-sigterm-others.log",
    "incidents/sglang-0.5-fp8-moe-on-ampere-triton-fp8e4nv.log",
    "incidents/docker-compose-torchrun-ddp-nccl-shm-no-space.log",
    "shapes/torchrun-fanout-interleaved.log",
    "captured/gpu/oom-batch-too-large.log",
]

LIVE_ONLY = {
    (Diagnosis, "score"): "the ranking score, used while the rules are matched",
    (Document, "focus"): "the run that failed, used while the facts are chosen",
    (Document, "failure_start"): "where the originating failure starts, used to cut the excerpt",
    (Document, "failure_end"): "where it ends (the stored excerpt carries its lines instead)",
    (Record, "time"): "each line's timestamp (the stored log keeps number, process, level, text)",
    (Record, "source"): "each line's logger location",
    (Fact, "priority"): "which statement of a fact wins, settled in the report's facts",
}
"""The fields only a live diagnosis has: everything else comes back from the store."""


def _stored(tmp_path: Path, name: str, redactor: Redactor) -> tuple[Report, Report]:
    log = ROOT / "corpus" / name
    live = diagnose(log.read_bytes(), source=log.name)
    store = Store(tmp_path / "i.db")
    rec = save(store, live, redactor, log.name)
    assert rec is not None
    loaded = store.latest_occurrence(rec.incident_id).report
    assert loaded is not None
    return live, loaded


def _differences(live, loaded, path: str = "report") -> list[str]:
    """Fields where the loaded model differs from the live one (``LIVE_ONLY`` left out)."""
    if dataclasses.is_dataclass(live) and not isinstance(live, type):
        if type(live) is not type(loaded):
            return [f"{path}: {type(loaded).__name__} is not {type(live).__name__}"]
        out = []
        for f in dataclasses.fields(live):
            if (type(live), f.name) in LIVE_ONLY:
                continue
            out += _differences(getattr(live, f.name), getattr(loaded, f.name), f"{path}.{f.name}")
        return out
    if isinstance(live, list) and isinstance(loaded, list) and len(live) == len(loaded):
        return [
            d
            for k, (a, b) in enumerate(zip(live, loaded))
            for d in _differences(a, b, f"{path}[{k}]")
        ]
    return [] if live == loaded else [path]


@pytest.mark.parametrize("name", LOGS)
def test_a_stored_report_loads_back_into_the_live_model(tmp_path, name):
    live, loaded = _stored(tmp_path, name, Redactor(enabled=False))
    assert _differences(live, loaded) == []


@pytest.fixture(scope="module")
def stored_pairs(tmp_path_factory) -> dict[str, tuple[Report, Report]]:
    """Each log's live report and the one loaded back from a store, made once for the
    formats' tests (rendering reads a report, never changes it)."""
    return {
        name: _stored(tmp_path_factory.mktemp("store"), name, Redactor(enabled=False))
        for name in LOGS
    }


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", LOGS)
def test_a_stored_report_renders_as_the_live_one(stored_pairs, name, fmt):
    live, loaded = stored_pairs[name]
    assert render(loaded, fmt) == render(live, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_redacted_stored_report_renders_as_the_live_one(tmp_path, fmt):
    # the seed log holds nothing secret: redaction changes nothing that is rendered
    live, loaded = _stored(tmp_path, LOGS[0], Redactor())
    assert render(loaded, fmt) == render(live, fmt)


def test_a_report_stored_without_its_log_still_loads(tmp_path):
    """An occurrence stored by an older tracelens has no parsed log: the report comes back
    with its diagnoses and facts, and an empty document that names the source."""
    log = ROOT / "corpus" / LOGS[0]
    live = diagnose(log.read_bytes(), source=log.name)
    store = Store(tmp_path / "i.db")
    rec = save(store, live, Redactor(enabled=False), log.name)
    assert rec is not None
    store.db.execute("DELETE FROM documents")
    loaded = store.latest_occurrence(rec.incident_id).report
    assert loaded is not None
    assert [d.rule_id for d in loaded.diagnoses] == [d.rule_id for d in live.diagnoses]
    assert loaded.facts == live.facts and loaded.document.source == live.source
    assert loaded.document.records == [] and loaded.verdict == live.verdict
    assert (
        render(loaded, "markdown").split("\n", 3)[3] == render(live, "markdown").split("\n", 3)[3]
    )


def test_incidents_occurrences_and_tickets_are_records(tmp_path):
    log = ROOT / "corpus" / LOGS[0]
    store = Store(tmp_path / "i.db")
    for source in ("a.log", "b.log"):
        save(store, diagnose(log.read_bytes()), Redactor(), source, log_hash=None)
    store.attach(1, "OPS-7")
    inc = store.incident(1)
    assert isinstance(inc, Incident) and inc.count == 2
    assert inc.occurrences is not None and [type(o) for o in inc.occurrences] == [Occurrence] * 2
    assert [o.source for o in inc.occurrences] == ["a.log", "b.log"]
    assert inc.tickets == [TicketLink(ref="OPS-7", created_at=inc.tickets[0].created_at)]
    stored = store.latest_occurrence(1)
    assert isinstance(stored.excerpt, Excerpt) and isinstance(stored.report, Report)


def test_the_json_of_an_incident_keeps_its_columns(tmp_path):
    """``incidents show --format json`` and ``incidents list --format json`` print the same
    keys as before the records: the table's columns, then occurrences and tickets."""
    store = Store(tmp_path / "i.db")
    save(store, diagnose((ROOT / "corpus" / LOGS[0]).read_bytes()), Redactor(), "a.log")
    columns = [c.name for c in store.db["incidents"].columns]
    data = incident_dict(store.incident(1))
    assert list(data) == [*columns, "occurrences", "tickets"]
    occ_columns = [
        c.name for c in store.db["occurrences"].columns if c.name not in ("excerpt", "report")
    ]
    assert list(data["occurrences"][0]) == occ_columns


@pytest.mark.parametrize(
    "text,lines,cut",
    [
        ("", [], False),
        ("12: a\n13: b", [(12, "a"), (13, "b")], False),
        ("1: a\n...\n9: b\n... (excerpt cut)", [(1, "a"), (9, "b")], True),
        ("5: key: value: more", [(5, "key: value: more")], False),
        ("7: ", [(7, "")], False),
        ("8:    indented", [(8, "   indented")], False),
    ],
)
def test_an_old_numbered_excerpt_parses_into_lines(text, lines, cut):
    ex = parse_numbered(text)
    assert [(ln.line, ln.text) for ln in ex.lines] == lines and ex.cut is cut


@pytest.mark.parametrize(
    "lines,cut,numbered",
    [
        ([], False, ""),
        ([(1, "a"), (2, "b")], False, "1: a\n2: b"),
        ([(1, "a"), (5, "b")], True, "1: a\n...\n5: b\n... (excerpt cut)"),
    ],
)
def test_the_numbered_form_is_what_the_old_excerpt_was(lines, cut, numbered):
    ex = Excerpt(lines=[ExcerptLine(line=n, text=t) for n, t in lines], cut=cut)
    assert ex.numbered() == numbered
    assert parse_numbered(numbered).numbered() == numbered


def _old_store(path: Path) -> Store:
    """A store as the last tracelens before structured excerpts made it."""
    k = next(i for i, m in enumerate(MIGRATIONS) if m.__name__.endswith("structured_excerpts"))
    return Store(path, migrations=MIGRATIONS[:k])


def test_an_old_store_converts_its_excerpts(tmp_path):
    db = tmp_path / "old.db"
    old = _old_store(db)
    rep = report_dict(diagnose((ROOT / "corpus" / LOGS[0]).read_bytes()))
    rep.pop("document")
    evidence = rep["diagnoses"][0]["evidence"][0]["line"]
    text = f"{evidence - 1}: before\n{evidence}: the evidence\n...\n{evidence + 9}: after\n... (excerpt cut)"
    old.db["incidents"].insert(
        {
            "id": 1,
            "fingerprint": "f",
            "title": "t",
            "category": "c",
            "first_seen": "2025",
            "last_seen": "2025",
            "count": 1,
            "status": "open",
        }
    )
    old.db["occurrences"].insert(
        {
            "id": 1,
            "incident_id": 1,
            "seen_at": "2025",
            "source": "old.log",
            "excerpt": zlib.compress(text.encode()),
            "report": zlib.compress(json.dumps(rep).encode()),
        }
    )
    old.close()
    new = Store(db)
    assert new.schema_version == len(MIGRATIONS)
    blob = zlib.decompress(new.db.execute("SELECT excerpt FROM occurrences").fetchone()[0])
    assert json.loads(blob)["cut"] is True  # stored structured, not parsed on every read
    ex = new.latest_occurrence(1).excerpt
    assert [(ln.line, ln.text, ln.evidence) for ln in ex.lines] == [
        (evidence - 1, "before", False),
        (evidence, "the evidence", True),
        (evidence + 9, "after", False),
    ]
    assert ex.cut and ex.numbered() == text


def test_a_new_excerpt_marks_evidence_process_and_the_failure(tmp_path):
    store = Store(tmp_path / "i.db")
    live = diagnose((ROOT / "corpus" / LOGS[0]).read_bytes())
    save(store, live, Redactor(), "a.log")
    ex = store.latest_occurrence(1).excerpt
    evidence = {e.line for e in live.diagnoses[0].evidence}
    assert {ln.line for ln in ex.lines if ln.evidence} == evidence
    records = {r.line: r for r in live.document.records}
    assert all(ln.process == records[ln.line].stream for ln in ex.lines)
    assert any(ln.origin for ln in ex.lines)


# --- list rows, similar-search candidates and similar hits --------------------------------------


def _seeded(tmp_path: Path) -> Store:
    store = Store(tmp_path / "i.db")
    for name in LOGS:
        save(store, diagnose((ROOT / "corpus" / name).read_bytes()), Redactor(), name)
    store.resolve(2, "lower the batch size", None)
    return store


@pytest.mark.parametrize(
    ("rows", "record"),
    [
        (lambda s: s.listing(), IncidentRow),
        (lambda s: s.listing(2, status="open"), IncidentRow),
        (lambda s: s.listing(before=("9999", 0), search="memory"), IncidentRow),
        (lambda s: s.candidates(["memory", "cuda", "nccl", "fp8"], None), Candidate),
        (lambda s: s.candidates(["zzzq"], "torch/gpu-oom"), Candidate),
    ],
)
def test_list_rows_and_candidates_are_records_of_their_columns(tmp_path, rows, record):
    """Each field of a row holds the column of its name (the query's columns follow the
    record's fields)."""
    store = _seeded(tmp_path)
    got = rows(store)
    assert got and {type(r) for r in got} == {record}
    for r in got:
        columns = next(store.db.query("SELECT * FROM incidents WHERE id = ?", [r.id]))
        assert dataclasses.asdict(r) == {f: columns[f] for f in dataclasses.asdict(r)}


def test_the_json_of_a_similar_hit_keeps_its_keys(tmp_path):
    """``diagnose --format json`` and ``similar --format json`` print each hit as before it was
    a record: the table's columns, then tickets, score, same_fingerprint, resolved, fix."""
    store = _seeded(tmp_path)
    store.attach(2, "OPS-7")
    columns = [c.name for c in store.db["incidents"].columns]
    live = diagnose((ROOT / "corpus" / LOGS[1]).read_bytes())
    live.similar = similar(store, live)
    hit = report_dict(live)["similar"][0]
    assert list(hit) == [*columns, "tickets", "score", "same_fingerprint", "resolved", "fix"]
    assert hit["tickets"] == [{"ref": "OPS-7", "created_at": hit["tickets"][0]["created_at"]}]
    assert (hit["id"], hit["resolved"], hit["fix"]) == (2, True, "lower the batch size")


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        # as written now
        ({"id": 3, "title": "OOM", "count": 2, "tickets": [{"ref": "OPS-1", "created_at": "t"}], "score": 91.5, "same_fingerprint": True, "resolved": True, "fix": "OPS-1"},
         SimilarIncident(id=3, title="OOM", count=2, tickets=[TicketLink(ref="OPS-1", created_at="t")], score=91.5, same_fingerprint=True, resolved=True, fix="OPS-1")),
        # as the first stores wrote it: no tickets, resolved, fix or same_fingerprint
        ({"id": 4, "fingerprint": "ab", "title": "NCCL", "status": "resolved", "remedy_worked": "NCCL_P2P_DISABLE=1", "score": 70.0},
         SimilarIncident(id=4, fingerprint="ab", title="NCCL", status="resolved", remedy_worked="NCCL_P2P_DISABLE=1", score=70.0)),
        # a key this version does not know is left out
        ({"id": 5, "score": 60, "why": "same rule"}, SimilarIncident(id=5, score=60.0)),
    ],
)  # fmt: skip
def test_a_stored_similar_hit_loads_back_as_a_record(stored, expected):
    assert load_report({"source": "a.log", "similar": [stored]}).similar == [expected]


@pytest.mark.parametrize(
    "text",
    ["plain ascii", "Größe ü 日本", "a lone surrogate \udcff here"],
    ids=["ascii", "utf-8", "surrogate"],
)
def test_stored_blobs_read_back_whatever_the_text_holds(text):
    from tracelens.incidents.records import decode_excerpt, encode_document, encode_excerpt

    excerpt = Excerpt(lines=[ExcerptLine(line=3, text=text, evidence=True)], cut=True)
    back = decode_excerpt(encode_excerpt(excerpt))
    expected = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    assert back.lines[0].text == expected and back.lines[0].evidence and back.cut
    document = {"records": [[1, "", "", text]], "line_count": 2**70}  # past orjson's integers
    data = json.loads(zlib.decompress(encode_document(document)))
    assert data["line_count"] == 2**70
    assert data["records"][0][3] == text
