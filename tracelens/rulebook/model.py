"""Rules: the YAML format as pydantic models, loading, validation with file/line/field errors.

Regexes are RE2 (linear time): no rule can make the tool hang on a hostile log.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Any, Literal

from tracelens.models import adapter, model
from tracelens.regex import compile_regex
from tracelens.rulebook.facttest import parse_fact_test

SEVERITIES = ("warning", "error", "fatal")
CONDITION_KINDS = ("exception", "frame", "line", "fact", "all", "any", "none")


class RuleError(Exception):
    """A rule file is broken. ``str()`` is one line naming the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str, message: str):
        self.path, self.line, self.field, self.message = path, line, field, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def _check_condition(cond: Any, path: str) -> None:
    """Validate one condition (recursively); raise ValueError naming the bad part."""
    if not isinstance(cond, dict) or len(cond) != 1:
        raise ValueError(f"{path}: a condition is a mapping with one key of {', '.join(CONDITION_KINDS)}")
    (kind, body), = cond.items()
    if kind not in CONDITION_KINDS:
        raise ValueError(f"{path}: unknown condition {kind!r} (expected one of {', '.join(CONDITION_KINDS)})")
    if kind in ("all", "any", "none"):
        if not isinstance(body, list) or not body:
            raise ValueError(f"{path}.{kind}: must be a non-empty list of conditions")
        for k, sub in enumerate(body):
            _check_condition(sub, f"{path}.{kind}[{k}]")
        return
    if kind == "line":
        if isinstance(body, str):
            compile_regex(body)
            return
        if not isinstance(body, dict) or not body or set(body) - {"text", "level", "stream"}:
            raise ValueError(f"{path}.line: a regex, or a mapping of text/level/stream")
        for key in ("text", "stream"):
            if key in body:
                compile_regex(str(body[key]))
        return
    if kind in ("exception", "frame"):
        allowed = {"type", "message"} if kind == "exception" else {"function", "file", "module"}
        if not isinstance(body, dict) or not body or set(body) - allowed:
            raise ValueError(f"{path}.{kind}: a mapping of {'/'.join(sorted(allowed))} regexes")
        for key, val in body.items():
            if not isinstance(val, str):
                raise ValueError(f"{path}.{kind}.{key}: must be a regex string")
            compile_regex(val)
        return
    if kind == "fact":
        if not isinstance(body, dict) or not body:
            raise ValueError(f"{path}.fact: a mapping of fact name to test")

        for name, test in body.items():
            parse_fact_test(str(test), f"{path}.fact.{name}")


_CONFIG = {"extra": "forbid", "use_attribute_docstrings": True}
"""pydantic's settings for the rule models (a plain dict: pydantic is imported only to
validate rule files that changed, never to use cached rules)."""


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
    when: dict[str, Any] | None = None
    """A condition (as in ``match``): the remedy is offered only when it holds."""


@model
class NoteSpec:
    __pydantic_config__ = _CONFIG
    when: dict[str, Any]
    """A condition (same forms as in ``match``); the note is shown when it holds."""
    text: str


@model
class MatchSpec:
    __pydantic_config__ = _CONFIG
    all: list[dict[str, Any]] = field(default_factory=list)
    any: list[dict[str, Any]] = field(default_factory=list)
    none: list[dict[str, Any]] = field(default_factory=list)


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
    status: Literal["stable", "experimental", "deprecated"] = "stable"
    needs: list[str | list[str]] = field(default_factory=list)
    """Literals that must all occur in the log for the rule to be evaluated; an item that is a
    list is satisfied by any one of its literals."""
    match: MatchSpec
    root_cause: str
    notes: list[NoteSpec] = field(default_factory=list)
    remedies: Annotated[list[RemedySpec], _MinLen(1)]
    does_not_help: list[str] = field(default_factory=list)
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
    return None


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


class _MinLen:
    """``annotated_types.MinLen`` for pydantic, resolved when a rule file is validated (the
    annotation is a string until then)."""

    def __init__(self, n: int):
        self.n = n

    def __get_pydantic_core_schema__(self, source, handler):
        schema = handler(source)
        schema["min_length"] = self.n
        return schema
