"""The data that flows between the pipeline's stages, in one place.

bytes -> :class:`Record` (logread) -> :class:`Document` (document) -> :class:`Diagnosis`
(match) -> :class:`Report` (the output of ``diagnose``).

The models are standard dataclasses that pydantic validates, dumps and describes (see
:func:`adapter`): pydantic treats a dataclass as a model of its own, and declaring them this
way keeps pydantic's import (longer, on a small machine, than reading a crash log) off the path
of a plain ``tracelens diagnose``. :func:`to_dict` dumps them without pydantic for the JSON
output.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, TypeVar

if sys.version_info >= (3, 11):  # typing_extensions (3 ms to import) only where typing lacks it
    from typing import dataclass_transform
else:
    from typing_extensions import dataclass_transform

_EXCLUDE = {"exclude": True}
_T = TypeVar("_T")


@dataclass_transform(kw_only_default=True, field_specifiers=(field,))
def model(cls: type[_T]) -> type[_T]:
    """Declare a model: a keyword-only dataclass with slots (type checkers read it as one)."""
    return dataclass(slots=True, kw_only=True)(cls)


def _list():
    return field(default_factory=list)


def _dict():
    return field(default_factory=dict)


@lru_cache(maxsize=None)
def adapter(cls: type) -> Any:
    """pydantic's TypeAdapter for a model (validation, dumping, JSON schema); imported on use."""
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def to_dict(obj: Any, exclude: frozenset[str] | set[str] = frozenset()) -> Any:
    """A model as JSON-ready data (nested models, lists and dicts too). Fields declared with
    ``exclude`` metadata (internal state such as a document's records) and the names in
    ``exclude`` (top level only) are left out.

    Built with a stack of its own rather than by recursion, so no depth of nesting can raise
    RecursionError.

    >>> to_dict([Record(line=1, text="x")], exclude={"level"})[0]["text"]
    'x'
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(obj, root, 0)]  # (value, container, key or index)
    top = True
    while stack:
        value, parent, key = stack.pop()
        if isinstance(value, (str, int, float, bool)) or value is None:
            parent[key] = value
        elif isinstance(value, list):
            out: Any = [None] * len(value)
            parent[key] = out
            stack.extend((v, out, i) for i, v in enumerate(value))
        elif isinstance(value, dict):
            out = dict.fromkeys(value)
            parent[key] = out
            stack.extend((v, out, k) for k, v in value.items())
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            names = _dump_fields(type(value))
            if top and exclude:
                names = tuple(n for n in names if n not in exclude)
            out = dict.fromkeys(names)
            parent[key] = out
            stack.extend((getattr(value, n), out, n) for n in names)
        else:
            parent[key] = value
        top = False
    return root[0]


@cache
def _dump_fields(cls: type) -> tuple[str, ...]:
    """The fields :func:`to_dict` writes for a model class, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls) if not f.metadata.get("exclude"))


SEVERITIES = ("warning", "error", "fatal")
"""A diagnosis's severity, least first: the one list (rules, ranking, --fail-on, verdicts)."""
SEVERITY_RANK = {name: k for k, name in enumerate(SEVERITIES)}
ERROR_LEVEL = frozenset(SEVERITIES[1:])
"""Severities that mean the log failed."""


@model
class Record:
    """One line of the log with its envelope peeled off."""

    line: int
    """1-based line number in the original log (lines split on ``\\n``; the segments of a
    line split by a bare ``\\r``, such as progress-bar frames, share its number)."""
    text: str
    """The line's text after timestamps, process tags and logger headers were removed."""
    stream: str = ""
    """The process that wrote the line (``EngineCore_DP0 pid=245``, ``rank3``, ``TP0``); empty
    when the log does not say."""
    level: str | None = None
    """Log level where the line carries one (``INFO``, ``WARNING``, ``ERROR`` …)."""
    time: str | None = None
    """The timestamp as the log printed it."""
    source: str | None = None
    """The logger's source location, e.g. ``core.py:700``."""


@model
class Frame:
    """One stack frame of a traceback."""

    file: str
    """Path as printed."""
    lineno: int | None = None
    """Line number in ``file``."""
    function: str | None = None
    """Function name; ``None`` for a SyntaxError location frame."""
    module: str | None = None
    """Dotted module derived from the path (``vllm.v1.attention.selector``)."""
    source: str | None = None
    """The source line Python printed under the frame."""
    line: int = 0
    """Log line number of the ``File "…"`` line."""
    end_line: int = 0
    """Log line number of the frame's last source or caret line."""
    repeated: int = 0
    """``[Previous line repeated N more times]`` after this frame."""


@model
class ExceptionInfo:
    """An exception: the last line(s) of a traceback segment, or an error line printed alone."""

    type: str
    """Qualified type as printed (``torch.OutOfMemoryError``, ``ValueError``); may be empty."""
    message: str = ""
    """The whole message, continuation lines joined with ``\\n``."""
    line: int = 0
    """Log line number of the exception line."""
    end_line: int = 0
    """Log line number of the message's last line."""
    nested: list[Traceback] = _list()
    """Tracebacks quoted in the message (RemoteTraceback, Ray) or exception-group members."""


@model
class Segment:
    """One ``Traceback (most recent call last):`` block and its exception."""

    frames: list[Frame] = _list()
    exception: ExceptionInfo | None = None
    """``None`` when the log ends (or is cut) before the exception line."""
    link: str | None = None
    """How this segment follows the previous one: ``cause`` ("direct cause") or ``context``
    ("During handling"); ``None`` for the first."""
    start_line: int = 0


@model
class Traceback:
    """A whole traceback, chained segments in print order (the last one is raised last)."""

    kind: str = "python"
    """``python``, ``group`` (exception group) or ``faulthandler``."""
    segments: list[Segment] = _list()
    start_line: int = 0
    end_line: int = 0
    stream: str = ""
    streams: list[str] = _list()
    """Every stream that printed this same traceback (fan-out across workers), each once, in
    order of first print (:mod:`tracelens.parse.fold` says what "the same" is)."""
    lines: list[int] = _list()
    """Start line of each copy, in print order (a stream that printed it twice has two)."""
    truncated: bool = False
    """The log ended (or the text was cut) before the traceback did."""

    @property
    def exception(self) -> ExceptionInfo | None:
        """The exception raised last (what the process died of)."""
        for seg in reversed(self.segments):
            if seg.exception is not None:
                return seg.exception
        return None

    @property
    def frames(self) -> list[Frame]:
        return [f for seg in self.segments for f in seg.frames]


@model
class ErrorLine:
    """An error-level record or a well-known fatal line outside any traceback."""

    line: int
    text: str
    stream: str = ""
    level: str | None = None
    kind: str = "level"
    """``level`` (the log said ERROR/CRITICAL), ``exception`` (a ``SomeError: message`` line
    printed alone) or the kind of a failure line of :mod:`tracelens.read.failures` (``cuda``,
    ``compiler``, ``killed``, ``crash`` ...)."""
    more: list[str] = _list()
    """For an ``exception`` line: the lines that continue its message."""


@model
class Fact:
    """A fact about the run, with the line it came from."""

    name: str
    value: str
    line: int = 0
    text: str = ""
    """The log text the fact was read from (shortened)."""
    priority: int = 0
    """When the log states a fact more than once, the highest priority wins, then the first."""
    derived: bool = False
    """Inferred (e.g. compute capability from the GPU name) rather than printed."""


@model
class StreamInfo:
    """One process's lines in the log (:attr:`Record.stream`)."""

    id: str
    records: int
    first_line: int
    last_line: int


@model
class Document:
    """What the log says, parsed: the input to the rules."""

    source: str = "-"
    size: int = 0
    """Bytes read."""
    line_count: int = 0
    full_parse: bool = True
    """False when the log was large and only the regions around trouble were parsed."""
    encoding: str = "utf-8"
    records: list[Record] = field(default_factory=list, metadata=_EXCLUDE)
    streams: list[StreamInfo] = _list()
    tracebacks: list[Traceback] = _list()
    errors: list[ErrorLine] = _list()
    facts: list[Fact] = _list()
    payloads: dict[str, dict] = _dict()
    """Structured payloads found in messages (``attention_selector``, ``backend_reasons``,
    ``torchrun_root_cause``)."""
    failure_line: int = field(default=0, metadata=_EXCLUDE)
    """The originating failure's line (0: none found)."""
    failure_start: int = field(default=0, metadata=_EXCLUDE)
    """The first line of the originating failure's traceback (or its line)."""
    failure_end: int = field(default=0, metadata=_EXCLUDE)
    """The last line of the originating failure: its traceback, the tracebacks chained to it
    and its message."""
    focus: tuple[int, int] | None = field(default=None, metadata=_EXCLUDE)
    """The lines of the run that failed, when the log holds several starts: facts stated
    there win (see :meth:`fact_map`)."""

    def fact_map(self) -> dict[str, Fact]:
        """One fact per name: one stated in the run that failed (:attr:`focus`) first, then the
        highest priority, then, when the same fact was stated with different values (a log of
        several runs), the last statement before the failure (:attr:`failure_line`), else the
        earliest."""
        best: dict[str, Fact] = {}
        lo, hi = self.focus if self.focus else (0, 0)
        until = self.failure_line

        def rank(f: Fact) -> tuple:
            inside = bool(self.focus) and lo <= f.line <= hi
            before = bool(until) and 0 < f.line <= until
            return (inside, f.priority, before, f.line if before else -f.line)

        values: dict[str, set[str]] = {}
        for fact in self.facts:
            values.setdefault(fact.name, set()).add(fact.value)
        for fact in self.facts:
            cur = best.get(fact.name)
            if cur is None:
                best[fact.name] = fact
            elif len(values[fact.name]) > 1 and rank(fact) > rank(cur):
                best[fact.name] = fact
            elif len(values[fact.name]) == 1 and fact.priority > cur.priority:
                best[fact.name] = fact
        return best


@model
class Evidence:
    """A log line that shows a diagnosis holds."""

    line: int
    text: str
    why: str = ""
    """Which condition this line satisfied."""


@model
class Remedy:
    """What to do about a diagnosis: steps in words and commands to paste."""

    title: str
    steps: list[str] = _list()
    commands: list[str] = _list()
    already_applied: bool = False
    """An upgrade remedy whose fixed version the log shows is already installed."""


@model
class Diagnosis:
    """A rule (or ``unrecognized``) that holds for the log: cause, evidence and remedies."""

    rule_id: str
    title: str
    category: str
    severity: str
    confidence: float
    secondary: bool = False
    root_cause: str
    notes: list[str] = _list()
    """Conditional remarks that hold for this log (e.g. a flag the model config overrode)."""
    remedies: list[Remedy] = _list()
    does_not_help: list[str] = _list()
    evidence: list[Evidence] = _list()
    references: list[str] = _list()
    facts: dict[str, str] = _dict()
    """The facts the rule's text used or conditions tested."""
    score: float = field(default=0.0, metadata=_EXCLUDE)
    degrades: bool = field(default=False, metadata=_EXCLUDE)
    """The rule's ``degrades``: a failure the run carries on after, slower or wrong."""


@model
class IncidentColumns:
    """A stored incident's columns (the ``incidents`` table of the incident store): what an
    incident record and a similar-incident hit share."""

    id: int
    fingerprint: str = ""
    signature: str = ""
    title: str = ""
    category: str = ""
    rule_id: str | None = None
    exception_type: str | None = None
    message: str | None = None
    first_seen: str = ""
    last_seen: str = ""
    count: int = 0
    status: str = "open"
    resolution_note: str | None = None
    remedy_worked: str | None = None
    severity: str | None = None
    resolved_at: str | None = None

    @classmethod
    def columns(cls, row: dict) -> dict:
        """The incident columns of a row (other keys left out)."""
        return {k: v for k, v in row.items() if k in _INCIDENT_COLUMNS}


_INCIDENT_COLUMNS = frozenset(f.name for f in dataclasses.fields(IncidentColumns))


@model
class TicketLink:
    """A ticket recorded on an incident."""

    ref: str
    created_at: str = ""


@model
class SimilarIncident(IncidentColumns):
    """A past incident that resembles a log: its columns and tickets, how alike it is and
    what fixed it (``Report.similar``; the JSON output's ``similar`` entries)."""

    tickets: list[TicketLink] = _list()
    score: float = 0.0
    """How alike, 0-100 (see docs/similar.md)."""
    same_fingerprint: bool = False
    """The same rule, error and frames: this very failure, seen before."""
    resolved: bool = False
    fix: str | None = None
    """What fixed it, in words (the remedy that worked, the note, else the last ticket); only
    for a resolved incident."""


@model
class Report:
    """The result of diagnosing one log."""

    source: str
    diagnoses: list[Diagnosis] = _list()
    facts: dict[str, str] = _dict()
    document: Document
    similar: list[SimilarIncident] = _list()
    """Past incidents that resemble this log, best first (filled when an incident store is at
    hand)."""

    @property
    def verdict(self) -> str:
        """``failed`` (an error-level diagnosis), ``warnings`` (only warnings), ``healthy``, or
        ``empty`` (the log held nothing but blank lines: no evidence of health)."""
        if any(d.severity in ERROR_LEVEL for d in self.diagnoses):
            return "failed"
        if self.diagnoses:
            return "warnings"
        doc = self.document
        # (a stored report keeps no records: its line count says whether there were lines)
        if doc is not None and (
            doc.line_count == 0 or (doc.records and not any(r.text.strip() for r in doc.records))
        ):
            return "empty"
        return "healthy"

    @property
    def unrecognized(self) -> bool:
        """The first diagnosis is a failure no rule knows."""
        return bool(self.diagnoses) and self.diagnoses[0].rule_id == "unrecognized"
