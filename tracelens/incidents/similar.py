"""Similar past incidents, best first, and what fixed them.

The answer to "have we seen this before, and what fixed it?". Candidates come from the store's
full-text index (words of the signature) and the latest incidents of the same rule. Each gets a
similarity score, 0–100, made of how alike the originating errors are (exception type, the
normalized first line of the message, the innermost frames) and whether the diagnosis agrees
(the same rule, else the same category). The order is:

1. the incident with the same fingerprint (the same rule, error and frames: this very failure,
   seen before), whatever else scores;
2. then by score, where a resolved incident counts :data:`RESOLVED_BOOST` more (an incident
   that says what fixed it is worth more than one as alike that does not);
3. when none of those shown is resolved, the best resolved one further down comes last (the
   past fix is never cut off by the limit).

Incidents under ``min_score`` (:data:`DEFAULT_MIN_SCORE`, tuned on pairs of real logs of the
same failure: ``benchmarks/accuracy_similar.py``, docs/similar.md) are left out.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from tracelens.incidents import queries, search
from tracelens.incidents.connection import SCHEMA, Database, Reader, connect
from tracelens.incidents.rows import Candidate
from tracelens.incidents.signature import signature
from tracelens.models import IncidentColumns, Report, SimilarIncident, TicketLink
from tracelens.parse.normalize import normalize
from tracelens.pyregex import compile_re

if TYPE_CHECKING:
    from tracelens.incidents.records import Incident
    from tracelens.incidents.store import Store

DEFAULT_MIN_SCORE = 60.0
"""Below this score an incident is not shown as similar (see docs/similar.md)."""
RESOLVED_BOOST = 10.0
"""How much more a resolved incident counts when ordering (the score shown is unchanged)."""
ONE_SIDED = 0.75
"""What an error's likeness counts when one incident's rule names a known cause and the other's
names none (a generic ``IndexError: list index out of range`` is many failures)."""
GENERIC_RULES = frozenset({"unrecognized", "-", ""})
"""Rule ids that name no cause: two incidents sharing one are not alike for that."""


@dataclass
class Query:
    """What a search looks for: a failure's signature and diagnosis (a docstring of its own
    also spares dataclasses building one with inspect.signature)."""

    signature: str
    """The coarse signature text: ``rule | exception type | first line | frames``."""
    message: str
    rule_id: str | None
    category: str | None
    fingerprint: str | None = None
    exclude: int | None = None
    """An incident never similar to itself (the one a stored incident's query comes from)."""


def query_of(report: Report) -> Query | None:
    """The query for a diagnosed log; ``None`` when it shows no failure."""
    top = report.diagnoses[0] if report.diagnoses else None
    sig = signature(report.document, top)
    if sig is None:
        return None
    return Query(
        sig.coarse_text,
        normalize(sig.message)[:500],
        top.rule_id if top else None,
        top.category if top else None,
        sig.coarse,
    )


def query_of_incident(inc: IncidentColumns) -> Query:
    """The query for a stored incident (its own row is left out of the answer)."""
    return Query(
        inc.signature or "",
        normalize(inc.message or "")[:500],
        inc.rule_id,
        inc.category,
        inc.fingerprint,
        exclude=inc.id,
    )


@dataclass(frozen=True)
class Parts:
    """A coarse signature taken apart."""

    rule: str
    etype: str
    error: str
    frames: str
    names: frozenset[str] = frozenset()
    """The names the error line quotes (:func:`_names`)."""


@lru_cache(maxsize=4096)
def parts(sig: str) -> Parts:
    """``rule | type | first line | frames`` (the first line may itself hold ``|``); the same
    signature is taken apart once (a store's incidents are scored against many queries)."""
    pieces = sig.split(" | ")
    if len(pieces) < 4:
        return Parts("", "", sig, "", _names(sig))
    error = " | ".join(pieces[2:-1])
    return Parts(pieces[0], pieces[1], error, pieces[-1], _names(error))


def _type_score(a: str, b: str) -> float:
    if not a and not b:
        return 100.0
    if not a or not b:
        return 0.0
    # torch.OutOfMemoryError and torch.cuda.OutOfMemoryError: the same exception, moved
    if a.rsplit(".", 1)[-1] == b.rsplit(".", 1)[-1]:
        return 100.0
    return fuzz.ratio(a, b)


def _specific(rule: str | None) -> str | None:
    return rule if rule and rule not in GENERIC_RULES else None


_QUOTED = compile_re(r"'([^'\s]{2,120})'|`([^`\s]{2,120})`")


def _names(error: str) -> frozenset[str]:
    """The quoted names of an error line (a module, a key, a symbol, a parameter); none when
    it quotes more than two things (a command line, a list of choices)."""
    names = frozenset(a or b for a, b in _QUOTED.findall(error))
    return names if len(names) <= 2 else frozenset()


NAMES_DISTINGUISH = frozenset(
    {"python/module-not-found", "python/cannot-import-name", "quant/checkpoint-param-missing"}
)
"""Rules under which the names an error quotes are the failure: another missing module,
another name a package lacks, another parameter a checkpoint has, is another fix. Under any
other rule two errors that quote other names (two model types, two keys) are one cause."""
_NAMING_TYPES = ("ModuleNotFoundError", "ImportError")
"""Exceptions whose quoted name is the failure itself: which module is missing, which name a
package lacks (under one rule too: ``python/module-not-found`` of ``triton`` is not that of
``pybase64``)."""


def _names_the_cause(a: str, b: str) -> bool:
    return any(t.rsplit(".", 1)[-1] in _NAMING_TYPES for t in (a, b))


def similarity(
    q: Query, sig: str, rule_id: str | None, category: str | None, *, _parts: Parts | None = None
) -> float:
    """How alike a query's failure is to a stored incident's, 0–100.

    The originating errors are compared first: the error's first line (60 %), the exception
    type (25 %), the innermost frames (15 %). An empty message says nothing (two empty ones
    count as alike as their frames); when both lines quote names (a module, a key) and none is
    the same, the line counts half and the errors are not the same failure; under one rule
    this holds only for the rules of :data:`NAMES_DISTINGUISH` and import errors (where a name
    on one side only also counts), not for another model type under one "model type unknown". The diagnoses then
    weigh in: the same rule (the same known cause) lifts the score to ``45 + 0.55 × that``;
    two different rules (two different known causes) cut it to half; with no rule on one side,
    the same category adds 5 and the whole counts :data:`ONE_SIDED` (had the two been one
    failure, the rule that knows it would have named both)."""
    a = _parts or parts(q.signature)
    b = parts(sig)
    frames = fuzz.token_set_ratio(a.frames, b.frames) if (a.frames and b.frames) else 50.0
    if a.error and b.error:
        error = fuzz.token_sort_ratio(a.error, b.error)
    else:  # an empty message says nothing: a bare AssertionError is like another by its frames
        error = frames if not (a.error or b.error) and a.frames and b.frames else 0.0
    mine, theirs = _specific(q.rule_id), _specific(rule_id)
    mine_names, their_names = a.names, b.names
    other_names = bool(mine_names and their_names and not mine_names & their_names)
    if mine and mine == theirs:
        if mine in NAMES_DISTINGUISH or _names_the_cause(a.etype, b.etype):
            # under one rule too: a name on one side only is another module or parameter
            other_names = other_names or bool(mine_names) != bool(their_names)
        else:  # one known cause, other names: another model type, another key
            other_names = False
    if other_names:
        error /= 2  # No module named 'triton' is not No module named 'pybase64'
    text = 0.6 * error + 0.25 * _type_score(a.etype, b.etype) + 0.15 * frames
    if mine and mine == theirs and not other_names:
        return 45 + 0.55 * text
    if mine and theirs:
        return 0.5 * text
    if q.category and q.category == category and q.category != "unclassified":
        text += 5
    if mine or theirs:  # a known cause on one side only: its rule would have named the other
        text *= ONE_SIDED
    return min(100.0, text)


_WORD = compile_re(r"[A-Za-z][A-Za-z0-9_]{2,}")
_NOISE = frozenset(
    {"path", "size", "hex", "uuid", "the", "and", "for", "with", "from", "not", "was"}
)


def words(q: Query, limit: int = 32) -> list[str]:
    """Distinct words of a query, as the full-text index tokenizes them."""
    out: list[str] = []
    for text in (q.signature, q.message):
        for w in _WORD.findall(text):
            for part in w.lower().split("_"):
                if len(part) >= 3 and part not in _NOISE and part not in out:
                    out.append(part)
    return out[:limit]


def fix_of(inc: Incident | SimilarIncident) -> str | None:
    """What fixed an incident, in words: the remedy that worked, the resolution note, else the
    last attached ticket; ``None`` when nothing says."""
    said = [s.strip() for s in (inc.remedy_worked, inc.resolution_note) if s]
    said = [s for k, s in enumerate(said) if s and s not in said[:k]]
    if said:
        return " — ".join(said)
    return inc.tickets[-1].ref if inc.tickets else None


def rank(
    store: Store | Reader, q: Query, limit: int = 5, min_score: float = DEFAULT_MIN_SCORE
) -> list[SimilarIncident]:
    """The ``limit`` incidents most like ``q``, in the order of the module's docstring; when
    none of them is resolved, the best resolved one further down (at least ``min_score``)
    comes last: the past fix is never cut off by the limit."""
    mine = _specific(q.rule_id)
    # two different known causes score half of at most 100: under a higher minimum, only the
    # incidents of this rule or of none are read (the same failure is read on its own below)
    rules = [mine, *sorted(GENERIC_RULES)] if mine and min_score > 50 else None
    rows = search.candidate_rows(store.db, words(q), q.rule_id, rules=rules)
    found = {c.id: c for c in (Candidate(*row) for row in rows)}
    same: int | None = None
    if q.fingerprint:
        row = store.db.execute(*queries.candidate_by_fingerprint(q.fingerprint)).fetchone()
        if row is not None:
            same = row[0]
            found[same] = Candidate(*row)
    a = parts(q.signature)
    scored: dict[int, float] = {}
    for c in found.values():
        if c.id == q.exclude:
            continue
        theirs = _specific(c.rule_id)
        if mine and theirs and theirs != mine and c.id != same and min_score > 50:
            continue  # two different known causes score half of at most 100
        score = similarity(q, c.signature or "", c.rule_id, c.category, _parts=a)
        if score >= min_score or c.id == same:
            scored[c.id] = score
    if not scored:
        return []
    resolved = {r[0] for r in store.db.execute(*queries.resolved_among(list(scored)))}
    order = sorted(
        scored,
        key=lambda i: (i != same, -(scored[i] + (RESOLVED_BOOST if i in resolved else 0.0)), i),
    )
    shown = order[:limit]
    if not resolved & set(shown):
        shown += [i for i in order[limit:] if i in resolved][:1]
    return [_entry(store, i, scored[i], i == same, i in resolved) for i in shown]


def _entry(
    store: Store | Reader, inc_id: int, score: float, same: bool, resolved: bool
) -> SimilarIncident:
    """A similar incident as ``Report.similar`` holds it: the incident's columns, its tickets,
    its score and, when resolved, what fixed it."""
    row = next(store.db.query(*queries.incident(inc_id)))
    hit = SimilarIncident(
        **SimilarIncident.columns(row),
        tickets=[TicketLink(**t) for t in store.db.query(*queries.tickets(inc_id))],
        score=round(score, 1),
        same_fingerprint=same,
        resolved=resolved,
    )
    hit.fix = fix_of(hit) if resolved else None
    return hit


def similar(
    store: Store | Reader, report: Report, limit: int = 5, min_score: float = DEFAULT_MIN_SCORE
) -> list[SimilarIncident]:
    q = query_of(report)
    return rank(store, q, limit, min_score) if q else []


def similar_to_incident(
    store: Store | Reader,
    incident: int | IncidentColumns,
    limit: int = 5,
    min_score: float = DEFAULT_MIN_SCORE,
) -> list[SimilarIncident]:
    """The incidents like a stored one (never itself): ``incident`` is its id or its record.
    None when there is no such incident."""
    from tracelens.incidents.records import Incident

    inc_id = incident if isinstance(incident, int) else incident.id
    row = next(store.db.query(*queries.incident(inc_id)), None)
    if row is None:
        return []
    return rank(store, query_of_incident(Incident.from_row(row)), limit, min_score)


def best_fix(hits: list[SimilarIncident]) -> SimilarIncident | None:
    """The first resolved incident among ``hits`` (ranked best first), or ``None``."""
    return next((h for h in hits if h.resolved), None)


def open_to_read(path: Path) -> Reader | Store:
    """The existing store at ``path``, to read: a :class:`~tracelens.incidents.connection.
    Reader` when its schema is current, else the :class:`~tracelens.incidents.store.Store`
    (which upgrades an older one and refuses a newer one with its one-line error)."""
    conn = connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError:
        version = None
    if version == SCHEMA:
        return Reader(Database(conn), path)
    conn.close()
    from tracelens.incidents.store import Store

    return Store(path, create=False)


def attach_similar(report: Report, path, limit: int = 5) -> Report:
    """Fill ``report.similar`` from the incident store at ``path`` when one exists (no store is
    no error; a store that cannot be read raises :class:`~tracelens.incidents.store.StoreError`)."""
    if Path(path).exists():
        store = open_to_read(Path(path))
        try:
            report.similar = similar(store, report, limit=limit)
        finally:
            store.close()
    return report
