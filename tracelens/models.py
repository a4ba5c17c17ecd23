"""The data that flows between the pipeline's stages, in one place.

bytes -> :class:`Record` (logread) -> :class:`Document` (document) -> :class:`Diagnosis`
(match) -> :class:`Report` (the output of ``diagnose``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    # Validators are built on first validation or dump, not at import: the text report never
    # needs them, and building them for every model costs more than reading a crash log.
    model_config = ConfigDict(defer_build=True)


class Record(_Model):
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


class Frame(_Model):
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


class ExceptionInfo(_Model):
    """An exception: the last line(s) of a traceback segment, or an error line printed alone."""

    type: str
    """Qualified type as printed (``torch.OutOfMemoryError``, ``ValueError``); may be empty."""
    message: str = ""
    """The whole message, continuation lines joined with ``\\n``."""
    line: int = 0
    """Log line number of the exception line."""
    end_line: int = 0
    """Log line number of the message's last line."""
    nested: list[Traceback] = Field(default_factory=list)
    """Tracebacks quoted in the message (RemoteTraceback, Ray) or exception-group members."""


class Segment(_Model):
    """One ``Traceback (most recent call last):`` block and its exception."""

    frames: list[Frame] = Field(default_factory=list)
    exception: ExceptionInfo | None = None
    """``None`` when the log ends (or is cut) before the exception line."""
    link: str | None = None
    """How this segment follows the previous one: ``cause`` ("direct cause") or ``context``
    ("During handling"); ``None`` for the first."""
    start_line: int = 0


class Traceback(_Model):
    """A whole traceback, chained segments in print order (the last one is raised last)."""

    kind: str = "python"
    """``python``, ``group`` (exception group) or ``faulthandler``."""
    segments: list[Segment] = Field(default_factory=list)
    start_line: int = 0
    end_line: int = 0
    stream: str = ""
    streams: list[str] = Field(default_factory=list)
    """Every stream that printed this same traceback (fan-out across workers)."""
    lines: list[int] = Field(default_factory=list)
    """Start line of each copy, in the order of ``streams``."""
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


ExceptionInfo.model_rebuild()


class ErrorLine(_Model):
    """An error-level record or a well-known fatal line outside any traceback."""

    line: int
    text: str
    stream: str = ""
    level: str | None = None
    kind: str = "level"
    """``level`` (the log said ERROR/CRITICAL), ``fatal`` (a known fatal pattern) or
    ``exception`` (a ``SomeError: message`` line printed alone)."""
    more: list[str] = Field(default_factory=list)
    """For an ``exception`` line: the lines that continue its message."""


class Fact(_Model):
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


class StreamInfo(_Model):
    id: str
    records: int
    first_line: int
    last_line: int


class Document(_Model):
    """What the log says, parsed: the input to the rules."""

    source: str = "-"
    size: int = 0
    """Bytes read."""
    line_count: int = 0
    full_parse: bool = True
    """False when the log was large and only the regions around trouble were parsed."""
    encoding: str = "utf-8"
    records: list[Record] = Field(default_factory=list, exclude=True)
    streams: list[StreamInfo] = Field(default_factory=list)
    tracebacks: list[Traceback] = Field(default_factory=list)
    errors: list[ErrorLine] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    payloads: dict[str, dict] = Field(default_factory=dict)
    """Structured payloads found in messages (``attention_selector``, ``backend_reasons``,
    ``torchrun_root_cause``)."""

    def fact_map(self) -> dict[str, Fact]:
        """One fact per name: the highest priority, then the earliest line."""
        best: dict[str, Fact] = {}
        for fact in self.facts:
            cur = best.get(fact.name)
            if cur is None or fact.priority > cur.priority:
                best[fact.name] = fact
        return best


class Evidence(_Model):
    line: int
    text: str
    why: str = ""
    """Which condition this line satisfied."""


class Remedy(_Model):
    title: str
    steps: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    already_applied: bool = False
    """An upgrade remedy whose fixed version the log shows is already installed."""


class Diagnosis(_Model):
    rule_id: str
    title: str
    category: str
    severity: str
    confidence: float
    secondary: bool = False
    root_cause: str
    notes: list[str] = Field(default_factory=list)
    """Conditional remarks that hold for this log (e.g. a flag the model config overrode)."""
    remedies: list[Remedy] = Field(default_factory=list)
    does_not_help: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    facts: dict[str, str] = Field(default_factory=dict)
    """The facts the rule's text used or conditions tested."""
    score: float = Field(default=0.0, exclude=True)


class Report(_Model):
    """The result of diagnosing one log."""

    source: str
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    facts: dict[str, str] = Field(default_factory=dict)
    document: Document
    similar: list[dict] = Field(default_factory=list)
    """Past incidents that resemble this log (filled when an incident store is at hand)."""
