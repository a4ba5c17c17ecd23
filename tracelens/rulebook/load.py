"""Rule files: discovery under the rules directories, YAML loading with file/line/field errors,
the cache of validated rules, and the loaded rule set."""

from __future__ import annotations

import os
import pickle
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from tracelens.rulebook.model import Rule, RuleError, validate_rule


@lru_cache(maxsize=1)
def _yaml():
    """PyYAML and its fastest safe loader, refusing duplicate keys, imported only when a rule
    file must be read (the validated rules are cached)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class UniqueKeyLoader(base):  # type: ignore[misc, valid-type]
        """A mapping that names a key twice is an error (YAML keeps the last one silently)."""

        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _value in node.value:
                try:
                    key = self.construct_object(key_node, deep=True)
                    first = seen.setdefault(key, key_node.start_mark.line + 1)
                except TypeError:  # an unhashable key: the constructor below reports it
                    continue
                if first != key_node.start_mark.line + 1:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"duplicate key {key!r} (first on line {first})",
                        key_node.start_mark,
                    )
            return super().construct_mapping(node, deep)

    return yaml, UniqueKeyLoader


class LoadedRule:
    """A rule file: its id and prefilter literals at once; the validated rule, its compiled
    match and its examples on first use (so a thousand rules cost little until one fires)."""

    __slots__ = ("id", "needs", "reports", "path", "_rule", "_blob", "_matcher", "_examples")

    def __init__(
        self,
        path: Path,
        rule: Rule | None = None,
        *,
        rule_id: str = "",
        needs=(),
        reports=(),
        blob: bytes = b"",
    ):
        self.path = path
        self._rule = rule
        self._blob = blob
        self.id = rule.id if rule is not None else rule_id
        self.needs = list(rule.needs) if rule is not None else list(needs)
        self.reports: list[tuple[str | None, str | None]] = (
            [(r.type, r.message) for r in rule.reports] if rule is not None else list(reports)
        )
        """(type, message) regexes of the wrappers this rule stands for."""
        self._matcher: Any = None
        self._examples: list[Path] | None = None

    @property
    def rule(self) -> Rule:
        if self._rule is None:
            self._rule = pickle.loads(self._blob)
        return self._rule

    @property
    def matcher(self) -> Any:
        """The compiled match (see :mod:`tracelens.rulebook.conditions`)."""
        if self._matcher is None:
            from tracelens.rulebook.conditions import compile_rule

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
    here = Path(__file__).resolve().parent.parent  # the tracelens package
    for cand in (here / "rules", here.parent / "rules"):
        if cand.is_dir():
            return cand
    return here / "rules"


def shipped_healthy_dir() -> Path:
    here = Path(__file__).resolve().parent.parent  # the tracelens package
    for cand in (here / "corpus" / "healthy", here.parent / "corpus" / "healthy"):
        if cand.is_dir():
            return cand
    return here / "corpus" / "healthy"


@lru_cache(maxsize=1)
def categories() -> frozenset[str]:
    """The category names rules may use (the shipped list)."""
    return pack_categories(shipped_rules_dir())


def pack_categories(root: Path) -> frozenset[str]:
    """The categories a rules directory declares in its own ``categories.yaml`` (a user's rule
    pack may add names; none when it has no such file or it cannot be read). Read when a rule
    file is validated, which the rule cache makes rare."""
    yaml, loader = _yaml()
    path = root / "categories.yaml"
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        return frozenset(str(item["name"]) for item in data["categories"])
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError):
        return frozenset()


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
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
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
        raise RuleError(
            shown,
            mark.line + 1 if mark else None,
            "",
            f"not valid YAML ({getattr(exc, 'problem', exc)})",
        ) from None
    if not isinstance(data, dict):
        raise RuleError(shown, 1, "", "a rule file is a YAML mapping")

    def node():  # composed only when an error needs a line number
        return yaml.compose(text, Loader=loader)

    try:
        rule = validate_rule(data)
    except ValueError as exc:
        loc, msg = exc.args
        raise RuleError(
            shown, _node_line(node(), loc), ".".join(str(p) for p in loc), msg
        ) from None
    expected = path.relative_to(root).with_suffix("").as_posix()
    if rule.id != expected:
        raise RuleError(
            shown,
            _node_line(node(), ("id",)),
            "id",
            f"is {rule.id!r} but the file's path says {expected!r}",
        )
    cats = categories() | pack_categories(root)
    if rule.category not in cats:
        raise RuleError(
            shown,
            _node_line(node(), ("category",)),
            "category",
            f"{rule.category!r} is not a known category (see rules/categories.yaml, or add it to"
            " a categories.yaml beside your rules)",
        )
    return rule


def rule_dirs(extra: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The shipped rules, then ``TRACELENS_RULES`` (path-separated), then ``--rules`` dirs;
    a folder named twice counts once."""
    dirs = [shipped_rules_dir()]
    env = os.environ.get("TRACELENS_RULES", "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra]
    return _distinct(dirs)


def _distinct(dirs: list[Path]) -> list[Path]:
    out: list[Path] = []
    seen: set[str] = set()
    for d in dirs:
        try:
            key = str(d.resolve())
        except OSError:
            key = str(d)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _duplicate_error(new: LoadedRule, old: LoadedRule) -> RuleError | None:
    """A rule whose id a rule of an earlier folder has: an error unless it says
    ``replaces: true`` (a user's rule never shadows a shipped one by accident)."""
    if new.rule.replaces:
        return None
    return RuleError(
        str(new.path),
        None,
        "id",
        f"{new.id!r} is also the id of {old.path}; rename the rule, or add 'replaces: true' to replace that one",
    )


def rule_files(root: Path) -> list[Path]:
    return [Path(p) for p, _st in _rule_entries(root)]


def _rule_entries(root: Path) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of every rule file under ``root``, sorted; one directory walk.

    Only regular files are rule files: a FIFO, socket or device named ``*.yaml`` is never
    opened (reading one would block or never end), and a folder reached twice through a
    symbolic link is walked once."""
    out: list[tuple[str, os.stat_result]] = []
    stack = [str(root)]
    seen: set[tuple[int, int]] = set()
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(folder) as it:
                for entry in it:
                    if entry.is_dir():
                        stack.append(entry.path)
                    elif (
                        entry.name.endswith(".yaml")
                        and entry.name != "categories.yaml"
                        and entry.is_file()
                    ):
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
    """Loaded, compiled rules. A rule of a later directory replaces one of an earlier directory
    with the same id only when it says ``replaces: true``."""

    def __init__(self, rules: list[LoadedRule], errors: list[RuleError] | None = None):
        from tracelens.rulebook.prefilter import Prefilter

        self.rules = rules
        self.errors = errors or []
        self.prefilter = Prefilter([lr.needs for lr in rules])
        self.wrappers = [w for lr in rules for w in lr.reports]
        self._nearest = None  # the nearest-failure index, built on first need
        """(type, message) regexes of every exception or line a symptom rule stands for."""

    def get(self, rule_id: str) -> LoadedRule | None:
        for lr in self.rules:
            if lr.id == rule_id:
                return lr
        return None


def _cache_path(roots: list[Path]) -> Path | None:
    from tracelens import __version__
    from tracelens.paths import cache_home
    from tracelens.rulebook import model

    base = str(cache_home())
    if base.startswith("~"):  # no home directory to expand: no cache
        return None
    # the rule model's code is part of the key: a cache made by other code is never read
    code = str(Path(model.__file__).stat().st_mtime_ns)
    text = "\0".join([__version__, code, *map(str, roots)]).encode()
    key = f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"  # zlib: hashlib's import costs more
    return Path(base) / "tracelens" / f"rules-{key}.pickle"


def read_cache(path: Path) -> Any:
    """A cache file's object, or None when it is missing, unreadable or from other code."""
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except (
        OSError,
        pickle.UnpicklingError,
        EOFError,
        AttributeError,
        ImportError,
        TypeError,
        ValueError,
    ):
        return None


def write_cache(path: Path, obj: Any) -> None:
    """Write a cache file atomically; a cache that cannot be written is simply not kept (a
    read-only home: the work is done again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass


class _Cache:
    """Validated rules keyed by file (mtime, size): a rule file is parsed and validated again
    only when it changed. A cache that cannot be read or written is simply not used."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict[str, tuple] = {}
        """path -> (mtime_ns, size, id, needs, reports, pickled rule)"""
        self.dirty = False
        data = read_cache(path) if path is not None else None
        if isinstance(data, dict):
            self.entries = data

    def get(self, path: str, st: os.stat_result) -> tuple[str, list, list, bytes] | None:
        """(id, needs, reports, pickled rule) of a file whose size and mtime are unchanged."""
        hit = self.entries.get(path)
        if hit and len(hit) == 6 and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            return hit[2], hit[3], hit[4], hit[5]
        return None

    def put(self, path: str, st: os.stat_result, rule: Rule) -> None:
        blob = pickle.dumps(rule, protocol=pickle.HIGHEST_PROTOCOL)
        reports = [(r.type, r.message) for r in rule.reports]
        self.entries[path] = (st.st_mtime_ns, st.st_size, rule.id, list(rule.needs), reports, blob)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty or self.path is None:
            return
        write_cache(self.path, self.entries)


def load(dirs: list[Path] | None = None, *, strict: bool = True, cache: bool = True) -> RuleSet:
    """Load every rule under ``dirs``. With ``strict``, the first broken file raises
    :class:`RuleError`; otherwise errors are collected on the RuleSet."""
    dirs = _distinct(dirs) if dirs is not None else rule_dirs()
    by_id: dict[str, LoadedRule] = {}
    errors: list[RuleError] = []
    store = _Cache(_cache_path(dirs) if cache else None)

    def add(lr: LoadedRule) -> None:
        old = by_id.get(lr.id)
        err = _duplicate_error(lr, old) if old is not None else None
        if err is not None:
            if strict:
                raise err
            errors.append(err)
            return  # the earlier rule stays
        by_id[lr.id] = lr

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
                rule_id, needs, reports, blob = hit
                add(
                    LoadedRule(Path(name), rule_id=rule_id, needs=needs, reports=reports, blob=blob)
                )
                continue
            try:
                rule = load_rule_file(Path(name), root)
            except RuleError as err:
                if strict:
                    raise
                errors.append(err)
                continue
            store.put(name, st, rule)
            add(LoadedRule(Path(name), rule))
    store.save()
    return RuleSet(list(by_id.values()), errors)


@lru_cache(maxsize=8)
def default_rules(extra: tuple[str, ...] = ()) -> RuleSet:
    return load(rule_dirs(extra))
