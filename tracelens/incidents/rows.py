"""The rows the store's read queries return, as slotted records built positionally from a
query's columns: light enough (no JSON, no compression, no report model) for the similar
search ``diagnose`` runs against a store.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(slots=True)
class IncidentRow:
    """One row of an incident list (:meth:`~tracelens.incidents.store.Store.listing`): the
    columns a list shows. Built positionally from the query's columns, which follow these
    fields (:data:`LISTED`), so a page of 20,000 costs little more than the tuples."""

    id: int
    title: str | None
    category: str | None
    rule_id: str | None
    status: str
    count: int
    last_seen: str


@dataclass(slots=True)
class Candidate:
    """What similar-incident search ranks of an incident
    (:meth:`~tracelens.incidents.store.Store.candidates`)."""

    id: int
    signature: str | None
    message: str | None
    rule_id: str | None
    category: str | None


LISTED = tuple(f.name for f in fields(IncidentRow))
"""The columns of an :class:`IncidentRow`, in order."""
CANDIDATE_COLUMNS = tuple(f.name for f in fields(Candidate))
"""The columns of a :class:`Candidate`, in order."""
