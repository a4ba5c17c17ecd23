"""What fails most (``tracelens top``): the store's incidents counted by fingerprint (each bug)
or by rule, with when each was first and last seen; with ``since``, only what was seen since
then is counted (occurrences read through their ``(incident_id, seen_at)`` index)."""

from __future__ import annotations

from typing import Any

from tracelens.incidents.store import Store

BY = ("fingerprint", "rule")

_COUNT_SINCE = (
    "(SELECT count(*) FROM occurrences o WHERE o.incident_id = incidents.id AND o.seen_at >= ?)"
)
_FIRST_SINCE = (
    "(SELECT min(o.seen_at) FROM occurrences o "
    "WHERE o.incident_id = incidents.id AND o.seen_at >= ?)"
)


def _per_incident(since: str | None) -> tuple[str, list]:
    """Each incident's count, first and last seen (since ``since``)."""
    cols = "id, rule_id, fingerprint, title, category, severity, status"
    if since is None:
        return f"SELECT {cols}, count AS n, first_seen, last_seen FROM incidents", []
    return (
        f"SELECT {cols}, {_COUNT_SINCE} AS n, {_FIRST_SINCE} AS first_seen, last_seen "
        "FROM incidents WHERE last_seen >= ?",
        [since, since, since],
    )


def top(
    store: Store, *, by: str = "fingerprint", since: str | None = None, limit: int | None = 20
) -> tuple[list[dict[str, Any]], int]:
    """The groups that were seen most, most first (ties: the latest first), and how many
    groups there are in all. ``by``: ``fingerprint`` (one row per incident) or ``rule``."""
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}")
    inner, params = _per_incident(since)
    if by == "fingerprint":
        sql = f"SELECT * FROM ({inner}) WHERE n > 0"
        order = "n DESC, last_seen DESC, id DESC"
    else:
        sql = (
            "SELECT rule_id, CASE count(DISTINCT category) WHEN 1 THEN min(category) "
            "ELSE '(several)' END AS category, count(*) AS incidents, sum(n) AS n, "
            f"min(first_seen) AS first_seen, max(last_seen) AS last_seen FROM ({inner}) "
            "WHERE n > 0 GROUP BY rule_id"
        )
        order = "n DESC, last_seen DESC, rule_id"
    total = store.db.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0]
    cur = store.db.execute(
        f"{sql} ORDER BY {order}" + (f" LIMIT {int(limit)}" if limit else ""), params
    )
    names = ["count" if d[0] == "n" else d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur], int(total)
