"""Similar past incidents: the ranking on the labelled pairs of real logs
(tests/data/similar_pairs.yaml), the score's parts, what fixed an incident, and the best past
fix in `diagnose`'s text and JSON."""

from __future__ import annotations

import json
import shutil

import pytest
import tiers
from similar_pairs import (
    NVLS,
    REDACTOR,
    Seen,
    diagnosed,
    load,
    nvls_store,
    pair_score,
    pairs,
    positives,
)

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.incidents.incident import save
from tracelens.incidents.records import Incident
from tracelens.incidents.redact import Redactor
from tracelens.incidents.similar import (
    DEFAULT_MIN_SCORE,
    Query,
    fix_of,
    rank,
    similar,
    similar_to_incident,
    similarity,
)
from tracelens.incidents.store import Store
from tracelens.models import SimilarIncident, TicketLink
from tracelens.render.text import render_text

# every labelled log, read for the slow tests below only (the full suite: tests/tiers.py)
ITEMS = load() if tiers.FULL else ()


@pytest.fixture(scope="module")
def seen() -> dict[str, Seen]:
    return {s.item.name: s for s in diagnosed(ITEMS)[0]}


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory, seen):
    """Every labelled log saved once: (the database file, incident id of each log)."""
    path = tmp_path_factory.mktemp("similar") / "all.db"
    store = Store(path)
    ids = {}
    for s in seen.values():
        rec = save(store, s.report, REDACTOR, s.item.name)
        assert rec is not None
        ids[s.item.name] = rec.incident_id
    store.close()
    return path, ids


@pytest.fixture()
def store_of(corpus_store, tmp_path):
    """A fresh copy of the corpus store (a test may resolve incidents in it)."""
    path, ids = corpus_store
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)
    store = Store(copy)
    # a copy of the database this module wrote: its integrity check before the first write
    # (every page read, about 7 ms) would be nearly half of each of these tests' time
    store._checked = True
    yield store, ids
    store.close()


TWINS = [(a.name, b.name) for a, b in positives(ITEMS)]
TWINS += [(b, a) for a, b in TWINS]


@pytest.mark.slow
@pytest.mark.parametrize(("asked", "twin"), TWINS)
def test_no_unrelated_incident_outranks_the_resolved_twin(store_of, seen, asked, twin):
    """The twin (another log of the same failure, resolved) ranks first among everything
    but its own family (another group of the same rule may rank above it; the other logs of
    its own group are left out of the answer)."""
    store, ids = store_of
    a, b = seen[asked], seen[twin]
    family = {n for n, s in seen.items() if s.item.family == a.item.family}
    hidden = {ids[n] for n, s in seen.items() if s.item.group == a.item.group} - {ids[twin]}
    store.resolve(ids[twin], None, "fixed it")
    hits = [h for h in rank(store, a.query, limit=50, min_score=0) if h.id not in hidden]
    names = {v: k for k, v in ids.items()}
    ranked = [h.id for h in hits]
    assert ids[twin] in ranked, f"{twin} is not a candidate for {asked}"
    above = [names[i] for i in ranked[: ranked.index(ids[twin])]]
    assert not [n for n in above if n not in family], (asked, b.item.name, above)
    assert hits[ranked.index(ids[twin])].fix == "fixed it"


SAME_FINGERPRINT = sorted({a for a, _b in TWINS})


@pytest.mark.slow
@pytest.mark.parametrize("asked", SAME_FINGERPRINT)
def test_the_same_fingerprint_ranks_first_even_against_resolved_incidents(store_of, seen, asked):
    store, ids = store_of
    own = ids[asked]
    store.db.execute("UPDATE incidents SET status = 'resolved' WHERE id != ?", [own])
    hits = rank(store, seen[asked].query, limit=3)
    assert hits[0].id == own and hits[0].same_fingerprint and not hits[0].resolved


@pytest.mark.slow
def test_the_default_threshold_on_the_labelled_pairs(seen):
    """Precision and recall at the default, as docs/similar.md gives them (a rule or a scoring
    change that moves them should move the table too: benchmarks/accuracy_similar.py)."""
    scored = [
        (pair_score(seen[a.name], seen[b.name]), lab)
        for a, b, lab in pairs(ITEMS)
        if lab != "related" and a.name in seen and b.name in seen
    ]
    shown = [lab for s, lab in scored if s >= DEFAULT_MIN_SCORE]
    same = sum(1 for _s, lab in scored if lab == "same")
    precision = shown.count("same") / len(shown)
    recall = shown.count("same") / same
    assert precision >= 0.8 and recall >= 0.9, (precision, recall)


def q(sig: str, rule: str | None = None, category: str | None = None) -> Query:
    return Query(sig, "", rule, category)


OOM = "torch.OutOfMemoryError | CUDA out of memory. Tried to allocate <size>. | forward > step"
MODULE = "ModuleNotFoundError | No module named '{}' | "


@pytest.mark.parametrize(
    ("query", "stored", "low", "high"),
    [
        # the same rule and error: near 100
        (q("torch/gpu-oom | " + OOM, "torch/gpu-oom"), ("torch/gpu-oom | " + OOM, "torch/gpu-oom"), 95, 100),
        # the same error under two different rules: two different known causes
        (q("torch/gpu-oom | " + OOM, "torch/gpu-oom"), ("vllm/cuda-graph-capture-oom | " + OOM, "vllm/cuda-graph-capture-oom"), 0, 50),
        # another missing module is another failure, even under the same rule
        (q("python/module-not-found | " + MODULE.format("triton"), "python/module-not-found"), ("python/module-not-found | " + MODULE.format("pybase64"), "python/module-not-found"), 0, DEFAULT_MIN_SCORE - 1),
        (q("python/module-not-found | " + MODULE.format("triton"), "python/module-not-found"), ("python/module-not-found | " + MODULE.format("triton"), "python/module-not-found"), 95, 100),
        # a name on one side only, under a rule where names are the failure: another module
        (q("python/module-not-found | ValueError | awq quantization requires some operators from vllm | get_config", "python/module-not-found"), ("python/module-not-found | " + MODULE.format("tensorrt"), "python/module-not-found"), 0, DEFAULT_MIN_SCORE - 1),
        # another key of one parameter-missing cause is another parameter: another failure
        (q("quant/checkpoint-param-missing | KeyError | 'model.layers.<n>.mlp.gate.g_idx' | load_weights", "quant/checkpoint-param-missing"), ("quant/checkpoint-param-missing | KeyError | 'model.layers.<n>.self_attn.weight_scale' | load_weights", "quant/checkpoint-param-missing"), 0, DEFAULT_MIN_SCORE - 1),
        # two model types transformers does not know: one cause, the names do not count
        (q("hf/model-type-unrecognized | KeyError | 'gemma<n>' | from_pretrained > get_config", "hf/model-type-unrecognized"), ("hf/model-type-unrecognized | KeyError | 'qwen<n>_next' | __init__ > create_model_config", "hf/model-type-unrecognized"), DEFAULT_MIN_SCORE, 100),
        # the same two under "unrecognized": no shared cause, other names
        (q("unrecognized | KeyError | 'gemma<n>' | from_pretrained > get_config", "unrecognized"), ("unrecognized | KeyError | 'qwen<n>_next' | __init__ > create_model_config", "unrecognized"), 0, DEFAULT_MIN_SCORE - 1),
        # torch.cuda.OutOfMemoryError became torch.OutOfMemoryError: one type
        (q("- | " + OOM), ("- | " + OOM.replace("torch.", "torch.cuda.", 1), None), 95, 100),
        # two bare AssertionErrors: alike only by their frames
        (q("unrecognized | AssertionError |  | fetch_new_loras > prepare_lora_batch", "unrecognized"), ("unrecognized | AssertionError |  | update_state_after_alloc > update_state", "unrecognized"), 0, DEFAULT_MIN_SCORE - 1),
        # "unrecognized" on both sides is no shared cause
        (q("unrecognized | KeyError | 'lm_head.weight' | save_checkpoint", "unrecognized"), ("unrecognized | KeyError | 'lm_head.weight' | save_checkpoint", "unrecognized"), 95, 100),
        # a known cause on one side only: a generic error worded alike is not enough
        (q("unrecognized | IndexError | list index out of range | extract_tool_calls > _stream", "unrecognized"), ("torch/distributed/device-mesh-rank-outside-mesh | IndexError | list index out of range | get_group > _init_mesh", "torch/distributed/device-mesh-rank-outside-mesh"), 0, 75),
        # ... while the same error and frames word for word are still shown
        (q("unrecognized | ValueError | block table is full | allocate > schedule", "unrecognized"), ("vllm/x | ValueError | block table is full | allocate > schedule", "vllm/x"), DEFAULT_MIN_SCORE, 80),
    ],
)  # fmt: skip
def test_similarity(query, stored, low, high):
    assert low <= similarity(query, stored[0], stored[1], None) <= high


@pytest.mark.parametrize(
    ("incident", "fix"),
    [
        (SimilarIncident(id=1, remedy_worked="Lower --gpu-memory-utilization", resolution_note="0.85 works"), "Lower --gpu-memory-utilization — 0.85 works"),
        (SimilarIncident(id=1, remedy_worked=None, resolution_note="rebooted the node"), "rebooted the node"),
        (SimilarIncident(id=1, remedy_worked="same", resolution_note="same"), "same"),
        (SimilarIncident(id=1, tickets=[TicketLink(ref="OPS-1"), TicketLink(ref="https://github.com/o/r/issues/7")]), "https://github.com/o/r/issues/7"),
        (SimilarIncident(id=1, resolution_note="  ", tickets=[]), None),
        (Incident(id=1, remedy_worked="set NCCL_P2P_DISABLE=1"), "set NCCL_P2P_DISABLE=1"),
        (Incident(id=1, tickets=None), None),
        (Incident(id=1, tickets=[TicketLink(ref="OPS-9")]), "OPS-9"),
    ],
)  # fmt: skip
def test_fix_of(incident, fix):
    assert fix_of(incident) == fix


def test_a_resolved_incident_beyond_the_limit_still_comes_with_its_fix(tmp_path):
    twin = nvls_store(tmp_path / "db")
    store = Store(tmp_path / "db")
    rec = save(store, diagnose(NVLS.read_bytes()), Redactor(), NVLS.name)  # the same: first
    assert rec is not None
    hits = similar(store, diagnose(NVLS.read_bytes()), limit=1)
    assert [h.id for h in hits] == [rec.incident_id, twin]
    assert hits[1].fix == "NCCL_NVLS_ENABLE=0" and hits[1].resolved


def test_similar_to_a_stored_incident_leaves_itself_out(tmp_path):
    twin = nvls_store(tmp_path / "db")
    store = Store(tmp_path / "db")
    rec = save(store, diagnose(NVLS.read_bytes()), Redactor(), NVLS.name)
    assert rec is not None
    assert [h.id for h in similar_to_incident(store, rec.incident_id)] == [twin]
    assert [h.id for h in similar_to_incident(store, store.incident(twin))] == [rec.incident_id]
    assert similar_to_incident(store, 999) == []


@pytest.mark.parametrize(
    ("similar_hits", "line"),
    [
        ([SimilarIncident(id=12, title="NVLS failed", count=2, status="resolved", score=81.0, resolved=True, fix="NCCL_NVLS_ENABLE=0")],
         'fixed before: #12 "NVLS failed" — NCCL_NVLS_ENABLE=0'),
        ([SimilarIncident(id=3, title="other", count=1, status="open", score=90.0, resolved=False, fix=None),
          SimilarIncident(id=12, title="NVLS failed", count=2, status="resolved", score=70.0, resolved=True, fix=None)],
         'fixed before: #12 "NVLS failed" — resolved, nothing noted'),
        ([SimilarIncident(id=3, title="other", count=1, status="open", score=90.0, resolved=False, fix=None)], None),
        ([SimilarIncident(id=7, title="word " * 30, count=1, status="resolved", score=70.0, resolved=True, fix="OPS-7")],
         'fixed before: #7 "' + ("word " * 16).rstrip() + '…" — OPS-7'),
    ],
)  # fmt: skip
def test_text_report_names_the_best_past_fix(similar_hits, line):
    rep = diagnose(NVLS.read_bytes())
    rep.similar = similar_hits
    lines = render_text(rep).splitlines()
    fixed = [ln for ln in lines if ln.startswith("fixed before:")]
    assert fixed == ([line] if line else [])


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diagnose_shows_the_past_fix_of_the_nvls_twin(tmp_path, capsys, fmt):
    """The issue's case: the corpus NVLS log's twin (the rule's example, another NCCL and torch)
    was resolved; `diagnose` names its fix."""
    twin = nvls_store(tmp_path / "db")
    assert main(["diagnose", str(NVLS), "--db", str(tmp_path / "db"), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "text":
        assert f'fixed before: #{twin} "' in out and "— NCCL_NVLS_ENABLE=0" in out
    else:
        first = json.loads(out)["similar"][0]
        assert first["id"] == twin and first["resolved"] is True
        assert first["fix"] == "NCCL_NVLS_ENABLE=0" and first["score"] >= DEFAULT_MIN_SCORE


def test_diagnose_without_a_resolved_incident_names_no_fix(tmp_path, capsys):
    nvls_store(tmp_path / "db", resolve=False)
    assert main(["diagnose", str(NVLS), "--db", str(tmp_path / "db")]) == 0
    out = capsys.readouterr().out
    assert "Similar past incidents:" in out and "fixed before:" not in out


def test_the_similar_command_defaults_to_the_tuned_threshold():
    from tracelens.cli.incidents import similar as command

    option = next(p for p in command.params if p.name == "min_score")
    assert option.default == DEFAULT_MIN_SCORE


def test_the_similar_command_says_what_fixed_each(tmp_path, capsys):
    twin = nvls_store(tmp_path / "db")
    assert main(["similar", str(NVLS), "--db", str(tmp_path / "db")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert f"#{twin} " in first and first.endswith("— fixed by: NCCL_NVLS_ENABLE=0")


def test_the_labels_and_the_score_agree_on_where_names_are_the_failure():
    """The labelled pairs' ``distinct_rules`` (truth) are the rules the score treats so."""
    import yaml
    from similar_pairs import PAIRS

    from tracelens.incidents.similar import NAMES_DISTINGUISH

    assert set(yaml.safe_load(PAIRS.read_text())["distinct_rules"]) == NAMES_DISTINGUISH
