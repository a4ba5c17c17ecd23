"""Rules: the YAML format as pydantic models, loading, validation with file/line/field errors.

Regexes are RE2 (linear time): no rule can make the tool hang on a hostile log.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import Annotated, Any, Literal

from tracelens.models import adapter, model
from tracelens.regex import compile_regex
from tracelens.rulebook.facttest import parse_fact_test


class RuleError(Exception):
    """A rule file is broken. ``str()`` is one line naming the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str, message: str):
        self.path, self.line, self.field, self.message = path, line, field, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def _check_condition(cond: Any, path: str) -> None:
    """What the types cannot say about a condition (recursively): its regexes compile in RE2
    and its fact tests parse; raise ValueError naming the bad part."""
    if isinstance(cond, (AllCond, AnyCond, NoneCond)):
        kind = cond.kind
        for k, sub in enumerate(getattr(cond, kind)):
            _check_condition(sub, f"{path}.{kind}[{k}]")
        return
    if isinstance(cond, FactCond):
        for name, test in cond.fact.items():
            parse_fact_test(str(test), f"{path}.fact.{name}")
        return
    for key, regex in cond.regexes():
        try:
            compile_regex(regex)
        except ValueError as exc:
            raise ValueError(f"{path}.{cond.kind}.{key}: {exc}") from None


def condition_regexes(cond: Any) -> Iterator[str]:
    """Every regex of a condition (recursively)."""
    if isinstance(cond, (AllCond, AnyCond, NoneCond)):
        for sub in getattr(cond, cond.kind):
            yield from condition_regexes(sub)
    elif not isinstance(cond, FactCond):
        for _key, regex in cond.regexes():
            yield regex


def rule_regexes(rule: Rule) -> set[str]:
    """Every regex a rule searches with: its conditions, its notes' and remedies' ``when``
    and its ``reports``."""
    conds = [c for kind in ("all", "any", "none") for c in getattr(rule.match, kind)]
    conds += [note.when for note in rule.notes]
    conds += [rem.when for rem in rule.remedies if rem.when is not None]
    conds += [item.when for item in rule.does_not_help if not isinstance(item, str)]
    found = {regex for cond in conds for regex in condition_regexes(cond)}
    found.update(v for rep in rule.reports for v in (rep.type, rep.message) if v is not None)
    return found


_CONFIG = {"extra": "forbid", "use_attribute_docstrings": True}
"""pydantic's settings for the rule models (a plain dict: pydantic is imported only to
validate rule files that changed, never to use cached rules)."""


@model
class ExceptionTest:
    """Any exception in the log: traceback chains, nested and grouped ones, and
    ``SomeError: message`` lines printed alone."""

    __pydantic_config__ = _CONFIG
    type: str | None = None
    """RE2 searched in the qualified type name as printed (``torch.OutOfMemoryError``)."""
    message: str | None = None
    """RE2 searched in the whole message (it may span lines)."""


@model
class FrameTest:
    """Any frame of any traceback."""

    __pydantic_config__ = _CONFIG
    function: str | None = None
    """RE2 searched in the function name."""
    file: str | None = None
    """RE2 searched in the file path as printed."""
    module: str | None = None
    """RE2 searched in the dotted module (from the path after site-packages)."""


@model
class LineTest:
    """Any log line, after its envelope (timestamps, process tags, logger headers) is removed."""

    __pydantic_config__ = _CONFIG
    text: str | None = None
    """RE2 searched in the line."""
    level: str | None = None
    """The log level the line was printed at (ERROR, WARNING ...)."""
    stream: str | None = None
    """RE2 searched in the process that printed it (``EngineCore_DP0 pid=245``, ``rank3``)."""
    count: Annotated[int, _AtLeast(2)] | None = None
    """At least this many lines match (a message a failing run prints at every step, where
    once is no failure)."""


def _nonempty(test: Any, kind: str, keys: tuple[str, ...]) -> None:
    if all(getattr(test, key) is None for key in keys):
        raise ValueError(f"{kind}: give at least one of {'/'.join(keys)}")


@model
class ExceptionCond:
    """``exception: {type: REGEX, message: REGEX}``"""

    __pydantic_config__ = _CONFIG
    exception: ExceptionTest
    kind = "exception"

    def __post_init__(self) -> None:
        _nonempty(self.exception, "exception", ("type", "message"))

    def regexes(self) -> list[tuple[str, str]]:
        return [
            (k, v) for k in ("type", "message") if (v := getattr(self.exception, k)) is not None
        ]


@model
class FrameCond:
    """``frame: {function: REGEX, file: REGEX, module: REGEX}``"""

    __pydantic_config__ = _CONFIG
    frame: FrameTest
    kind = "frame"

    def __post_init__(self) -> None:
        _nonempty(self.frame, "frame", ("function", "file", "module"))

    def regexes(self) -> list[tuple[str, str]]:
        return [
            (k, v)
            for k in ("function", "file", "module")
            if (v := getattr(self.frame, k)) is not None
        ]


@model
class LineCond:
    """``line: REGEX`` or ``line: {text: REGEX, level: LEVEL, stream: REGEX, count: N}``"""

    __pydantic_config__ = _CONFIG
    line: str | LineTest
    kind = "line"

    def __post_init__(self) -> None:
        if isinstance(self.line, LineTest):
            _nonempty(self.line, "line", ("text", "level", "stream"))

    def regexes(self) -> list[tuple[str, str]]:
        if isinstance(self.line, str):
            return [("text", self.line)]
        return [(k, v) for k in ("text", "stream") if (v := getattr(self.line, k)) is not None]


@model
class FactCond:
    """``fact: {NAME: TEST}``: a comparison (``'<0.17'``, ``'>=12.0'``, ``'!=auto'``) or a
    glob (``'fp8*'``; ``'*'`` means present)."""

    __pydantic_config__ = _CONFIG
    fact: Annotated[dict[str, str | int | float], _MinLen(1)]
    kind = "fact"


@model
class AllCond:
    """``all: [CONDITION, ...]``: every one holds."""

    __pydantic_config__ = _CONFIG
    all: Annotated[list[Condition], _MinLen(1)]
    kind = "all"


@model
class AnyCond:
    """``any: [CONDITION, ...]``: at least one holds."""

    __pydantic_config__ = _CONFIG
    any: Annotated[list[Condition], _MinLen(1)]
    kind = "any"


@model
class NoneCond:
    """``none: [CONDITION, ...]``: none holds."""

    __pydantic_config__ = _CONFIG
    none: Annotated[list[Condition], _MinLen(1)]
    kind = "none"


CONDITION_TYPES: dict[str, type] = {
    "exception": ExceptionCond,
    "frame": FrameCond,
    "line": LineCond,
    "fact": FactCond,
    "all": AllCond,
    "any": AnyCond,
    "none": NoneCond,
}


def _condition_kind(value: Any) -> str | None:
    """Which condition a mapping is (its one key), for pydantic's discriminator."""
    if isinstance(value, dict):
        return (
            next(iter(value)) if len(value) == 1 and next(iter(value)) in CONDITION_TYPES else None
        )
    return getattr(value, "kind", None)


class _ConditionSchema:
    """The discriminated union of the condition types, built when pydantic first needs it
    (a run that uses cached rules never imports pydantic)."""

    def __get_pydantic_core_schema__(self, source, handler):
        from typing import Annotated as A
        from typing import Union

        from pydantic import Discriminator, Tag

        union = Union[tuple(A[cls, Tag(kind)] for kind, cls in CONDITION_TYPES.items())]  # noqa: UP007
        disc = Discriminator(
            _condition_kind,
            custom_error_type="condition",
            custom_error_message="a condition is a mapping with one key of "
            + ", ".join(CONDITION_TYPES),
        )
        return handler(A[union, disc])


Condition = Annotated[Any, _ConditionSchema()]
"""One condition: exception, frame, line, fact, or all/any/none of further conditions."""


@model
class FixedIn:
    __pydantic_config__ = _CONFIG
    package: str
    """Package whose version fact (``<package>_version``) is compared."""
    version: str
    """First version with the fix."""


@model
class Verified:
    """One check of a rule's actionable claim against released code."""

    __pydantic_config__ = _CONFIG
    release: str
    """The release read, as ``package==version`` (a wheel from the registry or the source at
    its release tag)."""
    file: str
    """The file in that release where the claim was checked, e.g. ``vllm/engine/arg_utils.py``."""
    checked: str
    """What was found there: the flag, variable, command or version boundary and its effect."""


@model
class Upstream:
    """Where the message a rule matches is printed, in the upstream source."""

    __pydantic_config__ = _CONFIG
    file: str
    """The source file, with the release or tag read, e.g. ``vllm/v1/attention/selector.py@v0.16.0``."""
    text: str
    """The statement that prints or raises it, as written there (the constant part is what
    the rule matches)."""


@model
class Reports:
    """An exception (or an error line) that only reports a failure printed elsewhere: what a
    symptom rule stands for (``EngineDeadError``, "Engine core initialization failed",
    torchrun's ``ChildFailedError``). The originating failure is never one of these."""

    __pydantic_config__ = _CONFIG
    type: str | None = None
    """RE2 searched in the exception's type."""
    message: str | None = None
    """RE2 searched in the exception's message, or in the error line's text."""


@model
class RemedySpec:
    __pydantic_config__ = _CONFIG
    title: str
    steps: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    """Shell commands; ``{fact}`` placeholders are filled from the log."""
    fixed_in: FixedIn | None = None
    when: Condition | None = None
    """A condition (as in ``match``): the remedy is offered only when it holds."""


@model
class NoteSpec:
    __pydantic_config__ = _CONFIG
    when: Condition
    """A condition (same forms as in ``match``); the note is shown when it holds."""
    text: str


@model
class MatchSpec:
    __pydantic_config__ = _CONFIG
    all: list[Condition] = field(default_factory=list)
    """Every one holds."""
    any: list[Condition] = field(default_factory=list)
    """At least one holds (when the list is given)."""
    none: list[Condition] = field(default_factory=list)
    """None holds."""


@model
class Rule:
    """One rule file."""

    __pydantic_config__ = _CONFIG
    id: str
    """Equals the file's path under the rules directory, without ``.yaml``."""
    title: str
    category: str
    """One of the names in ``rules/categories.yaml``."""
    severity: Literal["fatal", "error", "warning"]
    secondary: bool = False
    """A symptom (engine died, worker died, RPC timeout): any primary cause outranks it."""
    degrades: bool = False
    """The run goes on after this failure, slower or wrong (a network plugin that failed and left
    NCCL on plain sockets): that the program carried on after it does not make it handled."""
    status: Literal["stable", "experimental", "deprecated"] = "stable"
    replaces: bool = False
    """This rule deliberately takes the place of a rule with the same id in an earlier rules
    folder (a shipped one); without it, two rules with one id are an error."""
    needs: list[str | list[str]] = field(default_factory=list)
    """Literals that must all occur in the log for the rule to be evaluated; an item that is a
    list is satisfied by any one of its literals."""
    match: MatchSpec
    root_cause: str
    notes: list[NoteSpec] = field(default_factory=list)
    remedies: Annotated[list[RemedySpec], _MinLen(1)]
    does_not_help: list[str | NoteSpec] = field(default_factory=list)
    """What a person might try that does not help (always shown), or ``{when, text}``: shown
    only when the condition holds (advice that is wrong for some versions only)."""
    references: Annotated[list[str], _MinLen(1)]
    false_positives: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    reports: list[Reports] = field(default_factory=list)
    """For a symptom (``secondary: true``): the wrapper exceptions and lines it stands for;
    they are skipped when tracelens looks for the failure that started it all."""
    upstream: list[Upstream] = field(default_factory=list)
    """The upstream statements that print the failure this rule matches."""
    verified: list[Verified] = field(default_factory=list)
    """Where each flag, environment variable, command and version claim of the remedies,
    notes and does-not-help items was checked in released code."""


def _semantic_errors(rule: Rule):
    """(location, message) of the first problem pydantic's types cannot express: the
    conditions' own grammar and regexes."""
    m = rule.match
    if not m.all and not m.any:
        return ("match",), "needs at least one condition under 'all' or 'any'"
    for k, need in enumerate(rule.needs):
        options = need if isinstance(need, list) else [need]
        if not options or any(not str(o).strip() for o in options):
            return (
                "needs",
                k,
            ), "an empty literal is in every log: it cannot narrow which logs the rule reads"
    for kind in ("all", "any", "none"):
        for k, cond in enumerate(getattr(m, kind)):
            try:
                _check_condition(cond, f"{kind}[{k}]")
            except ValueError as exc:
                return ("match",), str(exc)
    for k, rep in enumerate(rule.reports):
        if rep.type is None and rep.message is None:
            return ("reports", k), "needs a type or a message regex"
        for key in ("type", "message"):
            val = getattr(rep, key)
            if val is not None:
                try:
                    compile_regex(val)
                except ValueError as exc:
                    return ("reports", k, key), str(exc)
    for k, note in enumerate(rule.notes):
        try:
            _check_condition(note.when, "when")
        except ValueError as exc:
            return ("notes", k, "when"), str(exc)
    for k, rem in enumerate(rule.remedies):
        if rem.when is not None:
            try:
                _check_condition(rem.when, "when")
            except ValueError as exc:
                return ("remedies", k, "when"), str(exc)
    for k, item in enumerate(rule.does_not_help):
        if not isinstance(item, str):
            try:
                _check_condition(item.when, "when")
            except ValueError as exc:
                return ("does_not_help", k, "when"), str(exc)
    return None


def not_help_text(item: str | NoteSpec) -> str:
    """The text of a does-not-help item, whether or not it has a condition."""
    return item if isinstance(item, str) else item.text


def validate_rule(data: dict) -> Rule:
    """A rule from its parsed YAML; raises ValueError(location, message)."""
    from pydantic import ValidationError

    try:
        rule = adapter(Rule).validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "unexpected_keyword_argument":
            msg = "unknown field"
        raise ValueError(tuple(err["loc"]), msg) from None
    problem = _semantic_errors(rule)
    if problem is not None:
        raise ValueError(*problem)
    return rule


class _Bound:
    """A bound of pydantic's core schema (``annotated_types.MinLen`` or ``Ge``), resolved when a
    rule file is validated (the annotation is a string until then)."""

    def __init__(self, key: str, n: int):
        self.key, self.n = key, n

    def __get_pydantic_core_schema__(self, source, handler):
        schema = handler(source)
        schema[self.key] = self.n
        return schema


def _MinLen(n: int) -> _Bound:  # noqa: N802  (read as annotated_types' MinLen)
    """At least ``n`` items."""
    return _Bound("min_length", n)


def _AtLeast(n: int) -> _Bound:  # noqa: N802
    """An integer of ``n`` or more."""
    return _Bound("ge", n)
