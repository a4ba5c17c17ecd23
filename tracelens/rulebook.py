"""Rules: the YAML format as pydantic models, loading, validation with file/line/field errors.

Regexes are RE2 (linear time): no rule can make the tool hang on a hostile log.
"""

from __future__ import annotations

import os
import pickle
import zlib

from functools import lru_cache
from pathlib import Path
from dataclasses import field
from typing import Annotated, Any, Literal

import re2

from .models import adapter, model

SEVERITIES = ("warning", "error", "fatal")
CONDITION_KINDS = ("exception", "frame", "line", "fact", "all", "any", "none")
_RE2_OPTS = re2.Options()
_RE2_OPTS.log_errors = False


class RuleError(Exception):
    """A rule file is broken. ``str()`` is one line naming the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str, message: str):
        self.path, self.line, self.field, self.message = path, line, field, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


def _yaml():
    """PyYAML and its fastest safe loader, imported only when a rule file must be read (the
    validated rules are cached)."""
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=4096)
def compile_regex(pattern: str | bytes, *, multiline: bool = False) -> Any:
    """Compile an RE2 regex (a bytes pattern searches UTF-8 bytes); raises ValueError with
    RE2's reason."""
    flag = "(?m)" if multiline else ""
    try:
        if isinstance(pattern, bytes):
            return re2.compile(flag.encode() + pattern, _RE2_OPTS)
        return re2.compile(flag + pattern, _RE2_OPTS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(f"invalid RE2 regex {pattern!r}: {reason}") from None


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
        from .match import parse_fact_test  # late: match imports this module

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


class LoadedRule:
    """A rule file: its id and prefilter literals at once; the validated rule, its compiled
    match and its examples on first use (so a thousand rules cost little until one fires)."""

    __slots__ = ("id", "needs", "path", "_rule", "_blob", "_matcher", "_examples")

    def __init__(self, path: Path, rule: Rule | None = None, *, rule_id: str = "", needs=(), blob: bytes = b""):
        self.path = path
        self._rule = rule
        self._blob = blob
        self.id = rule.id if rule is not None else rule_id
        self.needs = list(rule.needs) if rule is not None else list(needs)
        self._matcher = None
        self._examples: list[Path] | None = None

    @property
    def rule(self) -> Rule:
        if self._rule is None:
            self._rule = pickle.loads(self._blob)
        return self._rule

    @property
    def matcher(self) -> Any:
        """The compiled match (see :mod:`tracelens.match`)."""
        if self._matcher is None:
            from .match import compile_rule

            self._matcher = compile_rule(self.rule)
        return self._matcher

    @property
    def examples(self) -> list[Path]:
        """Example logs beside the rule file."""
        if self._examples is None:
            self._examples = examples_of(self.path)
        return self._examples


def shipped_rules_dir() -> Path:
    """The rules that come with tracelens (inside the wheel, or the source tree)."""
    here = Path(__file__).resolve().parent
    for cand in (here / "rules", here.parent / "rules"):
        if cand.is_dir():
            return cand
    return here / "rules"


def shipped_healthy_dir() -> Path:
    here = Path(__file__).resolve().parent
    for cand in (here / "corpus" / "healthy", here.parent / "corpus" / "healthy"):
        if cand.is_dir():
            return cand
    return here / "corpus" / "healthy"


@lru_cache(maxsize=1)
def categories() -> frozenset[str]:
    """The category names rules may use."""
    yaml, loader = _yaml()
    path = shipped_rules_dir() / "categories.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return frozenset(item["name"] for item in data["categories"])


def _node_line(node, loc: tuple) -> int | None:
    """Line (1-based) of the YAML node at ``loc`` (a pydantic error location)."""
    if node is None:
        return None
    yaml, _ = _yaml()
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == part:
                    node = v
                    line = k.start_mark.line + 1
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def load_rule_file(path: Path, root: Path) -> Rule:
    """Parse and validate one rule file; raise :class:`RuleError`."""
    yaml, loader = _yaml()
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(shown, None, "", f"cannot read ({exc})") from None
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(shown, mark.line + 1 if mark else None, "", f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise RuleError(shown, 1, "", "a rule file is a YAML mapping")

    def node():  # composed only when an error needs a line number
        return yaml.compose(text, Loader=loader)

    try:
        rule = validate_rule(data)
    except ValueError as exc:
        loc, msg = exc.args
        raise RuleError(shown, _node_line(node(), loc), ".".join(str(p) for p in loc), msg) from None
    expected = path.relative_to(root).with_suffix("").as_posix()
    if rule.id != expected:
        raise RuleError(shown, _node_line(node(), ("id",)), "id", f"is {rule.id!r} but the file's path says {expected!r}")
    cats = categories()
    if rule.category not in cats:
        raise RuleError(shown, _node_line(node(), ("category",)), "category", f"{rule.category!r} is not a known category (see rules/categories.yaml)")
    return rule


def rule_dirs(extra: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The shipped rules, then ``TRACELENS_RULES`` (path-separated), then ``--rules`` dirs."""
    dirs = [shipped_rules_dir()]
    env = os.environ.get("TRACELENS_RULES", "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra]
    return dirs


def rule_files(root: Path) -> list[Path]:
    return [Path(p) for p, _st in _rule_entries(root)]


def _rule_entries(root: Path) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of every rule file under ``root``, sorted; one directory walk."""
    out: list[tuple[str, os.stat_result]] = []
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    if entry.is_dir():
                        stack.append(entry.path)
                    elif entry.name.endswith(".yaml") and entry.name != "categories.yaml":
                        out.append((entry.path, entry.stat()))
        except OSError:
            continue
    out.sort()
    return out


def examples_of(path: Path) -> list[Path]:
    stem = path.name[: -len(".yaml")]
    prefix = f"{stem}.example"
    return sorted(
        p for p in path.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(".log")
    )


class RuleSet:
    """Loaded, compiled rules. Later directories override earlier ones by id."""

    def __init__(self, rules: list[LoadedRule], errors: list[RuleError] | None = None):
        from .match import Prefilter

        self.rules = rules
        self.errors = errors or []
        self.prefilter = Prefilter([lr.needs for lr in rules])

    def get(self, rule_id: str) -> LoadedRule | None:
        for lr in self.rules:
            if lr.id == rule_id:
                return lr
        return None


def _cache_path(roots: list[Path]) -> Path | None:
    from . import __version__

    from .paths import cache_home

    base = str(cache_home())
    if base.startswith("~"):  # no home directory to expand: no cache
        return None
    # the rule model's code is part of the key: a cache made by other code is never read
    code = str(Path(__file__).stat().st_mtime_ns)
    text = "\0".join([__version__, code, *map(str, roots)]).encode()
    key = f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"  # zlib: hashlib's import costs more
    return Path(base) / "tracelens" / f"rules-{key}.pickle"


class _Cache:
    """Validated rules keyed by file (mtime, size): a rule file is parsed and validated again
    only when it changed. A cache that cannot be read or written is simply not used."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict[str, tuple[int, int, Rule]] = {}
        self.dirty = False
        if path is not None:
            try:
                with open(path, "rb") as fh:
                    data = pickle.load(fh)
                if isinstance(data, dict):
                    self.entries = data
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
                self.entries = {}

    def get(self, path: str, st: os.stat_result) -> tuple[str, list, bytes] | None:
        """(id, needs, pickled rule) of a file whose size and mtime are unchanged."""
        hit = self.entries.get(path)
        if hit and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            return hit[2], hit[3], hit[4]
        return None

    def put(self, path: str, st: os.stat_result, rule: Rule) -> None:
        blob = pickle.dumps(rule, protocol=pickle.HIGHEST_PROTOCOL)
        self.entries[path] = (st.st_mtime_ns, st.st_size, rule.id, list(rule.needs), blob)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty or self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                pickle.dump(self.entries, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only home: rules are validated on every run instead


def load(dirs: list[Path] | None = None, *, strict: bool = True, cache: bool = True) -> RuleSet:
    """Load every rule under ``dirs``. With ``strict``, the first broken file raises
    :class:`RuleError`; otherwise errors are collected on the RuleSet."""
    dirs = dirs if dirs is not None else rule_dirs()
    by_id: dict[str, LoadedRule] = {}
    errors: list[RuleError] = []
    store = _Cache(_cache_path(dirs) if cache else None)
    for root in dirs:
        if not root.is_dir():
            err = RuleError(str(root), None, "", "rules directory not found")
            if strict:
                raise err
            errors.append(err)
            continue
        for name, st in _rule_entries(root):
            hit = store.get(name, st)
            if hit is not None:
                rule_id, needs, blob = hit
                by_id[rule_id] = LoadedRule(Path(name), rule_id=rule_id, needs=needs, blob=blob)
                continue
            try:
                rule = load_rule_file(Path(name), root)
            except RuleError as err:
                if strict:
                    raise
                errors.append(err)
                continue
            store.put(name, st, rule)
            by_id[rule.id] = LoadedRule(Path(name), rule)
    store.save()
    return RuleSet(list(by_id.values()), errors)


@lru_cache(maxsize=8)
def default_rules(extra: tuple[str, ...] = ()) -> RuleSet:
    return load(rule_dirs(extra))
