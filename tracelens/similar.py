"""Similar past incidents: fuzzy matching over normalized signatures and messages.

The answer for a crash no rule knows: which incident it resembles, how often that was seen,
and what fixed it. Scores are 0–100: rapidfuzz's token-set ratio over the coarse signature
(rule, exception type, normalized message, innermost frames), a smaller weight on the message,
and a bonus when the rule or the category agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process

from .models import Report
from .signature import normalize, signature
from .store import Store


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
    return Query(sig.coarse_text, normalize(sig.message)[:500], top.rule_id if top else None, top.category if top else None)


def rank(store: Store, q: Query, limit: int = 5, min_score: float = 50.0) -> list[dict]:
    rows = store.signatures()
    if not rows:
        return []
    sigs = [r[1] or "" for r in rows]
    # a cheap first pass over every signature in C, then a closer look at the best
    first = process.extract(q.signature, sigs, scorer=fuzz.token_set_ratio, limit=max(limit * 10, 50), score_cutoff=min_score * 0.6)
    scored = []
    for _text, sig_score, k in first:
        inc_id, _sig, message, rule_id, category = rows[k]
        msg_score = fuzz.token_set_ratio(q.message, normalize(message or "")[:500]) if q.message else 0.0
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
