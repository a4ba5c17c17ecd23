"""The labelled pairs of logs for similar-incident search (tests/data/similar_pairs.yaml):
groups of logs of the same failure, families of related failures, rebuilt variants, and every
other corpus/incidents log as a failure of its own. Shared by tests/test_similar.py and
benchmarks/accuracy_similar.py."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from corpus_expect import expected

from tracelens.authoring.transforms import TRANSFORMS
from tracelens.engine import diagnose
from tracelens.incidents.incident import incident_fields, report_sources, save
from tracelens.incidents.redact import Redactor
from tracelens.incidents.similar import Query, parts, query_of, similarity
from tracelens.incidents.store import Store
from tracelens.models import Report

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "tests" / "data" / "similar_pairs.yaml"
REDACTOR = Redactor()
"""The built-in patterns, compiled once for every log saved here (a redactor is not changed by
use: what it learns from a report goes into a copy)."""
NVLS = ROOT / "corpus/incidents/heldout-r1-nccl-nvls-invalid-argument.log"
NVLS_TWIN = ROOT / "rules/nccl/nvls-multicast-failed.example.log"
"""The issue's case: a corpus NVLS log and its twin, the rule's example (another NCCL, torch)."""
UNRELATED = [
    ROOT / "corpus/incidents/heldout-r7-13-docker-ddp-nccl-shm-no-space.log",
    ROOT / "corpus/incidents/heldout-r1-sglang-mooncake-gb200-invalid-argument.log",
    ROOT / "corpus/incidents/heldout-r7-09-vllm-041-heads-not-divisible-by-tp6.log",
]
GENERIC = ("unrecognized", None)
"""Expected top rules that name no cause: each such log is a family of its own."""


@dataclass(frozen=True)
class Item:
    name: str
    """The log's path (a variant: ``PATH~ENVELOPE``)."""
    group: str
    family: str
    """Failures of one family that are not one group are left out of the figures."""
    rule: str | None
    """The expected top rule."""
    data: bytes


_DIGIT = re.compile(rb"[0-9]")


def rebuild(raw: bytes, envelope: str, digits: bool = True) -> bytes:
    """A log as another setup prints it: every digit changed (versions, sizes, ranks, pids,
    line numbers, timestamps; unless not ``digits``), site-packages moved, wrapped in
    ``envelope``."""
    if digits:
        raw = _DIGIT.sub(lambda m: b"%d" % ((int(m.group()) + 3) % 10), raw)
    raw = raw.replace(b"/usr/local/lib/python3", b"/opt/conda/envs/serve/lib/python3")
    return dict(TRANSFORMS)[envelope](raw)


def _expected_rule(log: Path) -> str | None:
    return expected(log).get("top_rule")


@cache
def load(path: Path = PAIRS) -> tuple[Item, ...]:
    spec = yaml.safe_load(path.read_text())
    family_of = {rule: fam for fam, rules in (spec.get("families") or {}).items() for rule in rules}

    distinct = set(spec.get("distinct_rules") or [])

    def family(rule: str | None, name: str) -> str:
        if rule in GENERIC or rule in distinct:
            return name
        return family_of.get(rule, rule) if rule else name

    items: list[Item] = []
    listed: set[str] = set()
    for g in spec["groups"]:
        fam = family(g["rule"], g["failure"])
        for log in g["logs"]:
            listed.add(log)
            items.append(Item(log, g["failure"], fam, g["rule"], (ROOT / log).read_bytes()))
        for v in g.get("variants") or []:
            data = rebuild((ROOT / v["of"]).read_bytes(), v["envelope"], v.get("digits", True))
            items.append(Item(f"{v['of']}~{v['envelope']}", g["failure"], fam, g["rule"], data))
    for log in sorted((ROOT / "corpus" / "incidents").glob("*.log")):
        name = str(log.relative_to(ROOT))
        if name not in listed:
            rule = _expected_rule(log)
            items.append(Item(name, name, family(rule, name), rule, log.read_bytes()))
    return tuple(items)


def label(a: Item, b: Item) -> str:
    """``same`` (one group), ``related`` (one family: left out of the figures), ``different``."""
    if a.group == b.group:
        return "same"
    return "related" if a.family == b.family else "different"


def pairs(items: tuple[Item, ...]) -> list[tuple[Item, Item, str]]:
    """Every pair of items, the first one earlier in the file, with its label."""
    return [(a, b, label(a, b)) for a, b in itertools.combinations(items, 2)]


def positives(items: tuple[Item, ...]) -> list[tuple[Item, Item]]:
    """The pairs labelled ``same``, in the order pairs() gives them, without making the others
    (over a million pairs of the whole corpus)."""
    by_group: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        by_group.setdefault(item.group, []).append(k)
    ks = sorted(p for members in by_group.values() for p in itertools.combinations(members, 2))
    return [(items[i], items[j]) for i, j in ks]


@dataclass
class Seen:
    """An item diagnosed: the query a new log makes and the fields its stored incident keeps."""

    item: Item
    query: Query
    fields: dict
    rule: str | None
    """The top rule it got."""
    report: Report


def diagnosed(items: tuple[Item, ...]) -> tuple[list[Seen], list[str]]:
    """The items that show a failure, and notes on the others (no failure; another top rule
    than their group's)."""
    out, notes = [], []
    for it in items:
        rep = diagnose(it.data)
        q = query_of(rep)
        if q is None:
            notes.append(f"{it.name}: no failure, left out")
            continue
        fields = incident_fields(rep, REDACTOR.learned(report_sources(rep)))
        assert fields is not None
        top = rep.diagnoses[0].rule_id if rep.diagnoses else None
        if it.group != it.name and top != it.rule:
            notes.append(f"{it.name}: top rule {top}, expected {it.rule}")
        out.append(Seen(it, q, fields, top, rep))
    return out, notes


# a query's signature taken apart once, as rank() does for the query it scores against every
# candidate (the threshold test scores each of 730 queries against the others: 262,000 pairs)
_query_parts = cache(parts)


def pair_score(a: Seen, b: Seen) -> float:
    """``a`` asked for, ``b`` stored: the same fingerprint is the same incident (100)."""
    if a.query.fingerprint == b.fields["fingerprint"]:
        return 100.0
    f = b.fields
    return similarity(
        a.query, f["signature"], f["rule_id"], f["category"], _parts=_query_parts(a.query.signature)
    )


def nvls_store(path: Path, resolve: bool = True, note: str = "NCCL_NVLS_ENABLE=0") -> int:
    """A store of the NVLS twin and unrelated incidents; returns the twin's id."""
    store = Store(path)
    for log in UNRELATED:
        save(store, diagnose(log.read_bytes()), REDACTOR, log.name)
    rec = save(store, diagnose(NVLS_TWIN.read_bytes()), REDACTOR, NVLS_TWIN.name)
    assert rec is not None
    if resolve:
        store.resolve(rec.incident_id, None, note)
        store.attach(rec.incident_id, "https://github.com/o/r/issues/12")
    store.close()
    return rec.incident_id
