"""Similar past incidents: fuzzy matching over normalized signatures and messages.

The answer for a crash no rule knows: which incident it resembles, how often that was seen,
and what fixed it. Scores are 0–100: rapidfuzz's token-set ratio over the coarse signature
(rule, exception type, normalized message, innermost frames), a smaller weight on the message,
and a bonus when the rule or the category agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from tracelens.incidents.signature import signature
from tracelens.incidents.store import Store
from tracelens.models import Report
from tracelens.parse.normalize import normalize


@dataclass
class Query:
    signature: str
    message: str
    rule_id: str | None
    category: str | None


def query_of(report: Report) -> Query | None:
    top = report.diagnoses[0] if report.diagnoses else None
    sig = signature(report.document, top)
    if sig is None:
        return None
    return Query(
        sig.coarse_text,
        normalize(sig.message)[:500],
        top.rule_id if top else None,
        top.category if top else None,
    )


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
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


def rank(store: Store, q: Query, limit: int = 5, min_score: float = 50.0) -> list[dict]:
    rows = store.candidates(words(q), q.rule_id)
    if not rows:
        return []
    sigs = [r[1] or "" for r in rows]
    # the index picked candidates; a fuzzy pass over them in C, then a closer look at the best
    first = process.extract(
        q.signature,
        sigs,
        scorer=fuzz.token_set_ratio,
        limit=max(limit * 10, 50),
        score_cutoff=min_score * 0.6,
    )
    scored = []
    for _text, sig_score, k in first:
        inc_id, _sig, message, rule_id, category = rows[k]
        msg_score = (
            fuzz.token_set_ratio(q.message, normalize(message or "")[:500]) if q.message else 0.0
        )
        score = 0.75 * sig_score + 0.25 * msg_score
        if q.rule_id and rule_id == q.rule_id:
            score += 10
        elif q.category and category == q.category:
            score += 5
        score = min(100.0, score)
        if score >= min_score:
            scored.append((score, inc_id))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out = []
    for score, inc_id in scored[:limit]:
        inc = store.incident(inc_id)
        inc.pop("occurrences", None)
        inc["score"] = round(score, 1)
        out.append(inc)
    return out


def similar(store: Store, report: Report, limit: int = 5, min_score: float = 50.0) -> list[dict]:
    q = query_of(report)
    return rank(store, q, limit, min_score) if q else []


def attach_similar(report: Report, path, limit: int = 5) -> Report:
    """Fill ``report.similar`` from the incident store at ``path`` when one exists (no store is
    no error; a store that cannot be read raises :class:`~tracelens.incidents.store.StoreError`)."""
    from pathlib import Path

    if Path(path).exists():
        store = Store(path, create=False)
        try:
            report.similar = similar(store, report, limit=limit)
        finally:
            store.close()
    return report
