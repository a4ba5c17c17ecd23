"""The loaded rule set: the rules folders (shipped, ``TRACELENS_RULES``, ``--rules``), their
compiled index (:mod:`tracelens.rulebook.index`) and the rules a run uses, each validated model
unpickled and compiled only when its prefilter literals occur."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from tracelens import paths
from tracelens.rulebook.model import Rule, RuleError
from tracelens.rulebook.rulefile import (  # noqa: F401  (where the rest of tracelens finds them)
    categories,
    shipped_healthy_dir,
    shipped_rules_dir,
)

if TYPE_CHECKING:
    from tracelens.rulebook.index import Index
    from tracelens.rulebook.prefilter import Prefilter


class LoadedRule:
    """A rule of the set: its id and file at once; the validated rule, its compiled match and
    its examples on first use (so ten thousand rules cost little until one fires)."""

    __slots__ = ("id", "_path", "_rule", "_source", "_matcher", "_examples")

    def __init__(
        self,
        path: Path | str,
        rule: Rule | None = None,
        *,
        rule_id: str = "",
        source: Callable[[], Rule] | None = None,
        examples: list[Path] | None = None,
    ):
        self._path = path
        self._rule = rule
        self._source = source
        self.id = rule.id if rule is not None else rule_id
        self._matcher: Any = None
        self._examples = examples

    @property
    def path(self) -> Path:
        """The rule file."""
        if isinstance(self._path, str):
            self._path = Path(self._path)
        return self._path

    @property
    def rule(self) -> Rule:
        if self._rule is None:
            assert self._source is not None
            self._rule = self._source()
        return self._rule

    @property
    def needs(self) -> list[str | list[str]]:
        """The literals the prefilter looks for: the rule's own ``needs``, or those its
        conditions require (:func:`~tracelens.rulebook.required.derived_needs`)."""
        from tracelens.rulebook.required import rule_needs

        return rule_needs(self.rule)

    @property
    def reports(self) -> list[tuple[str | None, str | None]]:
        """(type, message) regexes of the wrappers this rule stands for."""
        return [(r.type, r.message) for r in self.rule.reports]

    @property
    def matcher(self) -> Any:
        """The compiled match (see :mod:`tracelens.rulebook.conditions`)."""
        if self._matcher is None:
            from tracelens.rulebook.conditions import compile_rule

            self._matcher = compile_rule(self.rule)
        return self._matcher

    @property
    def examples(self) -> list[Path]:
        """Example logs beside the rule file (``<name>.example*.log``)."""
        if self._examples is None:
            stem = self.path.name[: -len(".yaml")]
            self._examples = sorted(
                p
                for p in self.path.parent.iterdir()
                if p.name.startswith(f"{stem}.example") and p.name.endswith(".log")
            )
        return self._examples


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


class _IndexedRules(Sequence[LoadedRule]):
    """The rules of an index, each :class:`LoadedRule` made on first access."""

    def __init__(self, index: Index):
        self._index = index
        self._made: dict[int, LoadedRule] = {}

    def __len__(self) -> int:
        return len(self._index.ids)

    @overload
    def __getitem__(self, k: int) -> LoadedRule: ...

    @overload
    def __getitem__(self, k: slice) -> list[LoadedRule]: ...

    def __getitem__(self, k: int | slice) -> LoadedRule | list[LoadedRule]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        lr = self._made.get(k)
        if lr is None:
            idx = self._index
            lr = LoadedRule(
                idx.paths[k],
                rule_id=idx.ids[k],
                source=lambda: idx.model(k),
                examples=idx.examples(k),
            )
            self._made[k] = lr
        return lr

    def __iter__(self) -> Iterator[LoadedRule]:
        return (self[k] for k in range(len(self)))


class _CheckedPrefilter:
    """The prefilter of a rule set loaded from its index: the files of the rules it picks are
    stat'ed before they are used, and the set is reloaded when one was edited in place (which
    leaves its folder's mtime alone)."""

    def __init__(self, ruleset: RuleSet):
        self._rs = ruleset

    @property
    def literals(self) -> list[str]:
        return self._rs._index_prefilter().literals

    def present(self, text: str) -> set[str]:
        return self._rs._index_prefilter().present(text)

    def expect_many(self) -> None:
        self._rs._index_prefilter().expect_many()

    def candidates(self, text: str) -> list[int]:
        ks = self._rs._index_prefilter().candidates(text)
        if self._rs._reload_if_changed(ks):
            ks = self._rs._index_prefilter().candidates(text)
        return ks


class RuleSet:
    """Loaded rules. A rule of a later directory replaces one of an earlier directory with the
    same id only when it says ``replaces: true``."""

    def __init__(self, rules: Sequence[LoadedRule], errors: list[RuleError] | None = None):
        from tracelens.rulebook.prefilter import Prefilter

        self.rules: Sequence[LoadedRule] = rules
        self.errors = errors or []
        self.prefilter: Prefilter | _CheckedPrefilter = Prefilter([lr.needs for lr in rules])
        self.wrappers = [w for lr in rules for w in lr.reports]
        """(type, message) regexes of every exception or line a symptom rule stands for."""
        self._nearest = None  # the nearest-failure index, built on first need
        self._words = None  # its words table (tracelens.rulebook.words), built on first need
        self._index: Index | None = None
        self._dirs: list[Path] = []
        self._cache = True
        self._stamped: set[int] | None = None

    @classmethod
    def from_index(cls, index: Index, dirs: list[Path], cache: bool) -> RuleSet:
        rs = cls.__new__(cls)
        rs._nearest = None
        rs._words = None
        rs._dirs, rs._cache = dirs, cache
        rs._stamped = None
        rs._use(index)
        rs.prefilter = _CheckedPrefilter(rs)
        return rs

    def _use(self, index: Index) -> None:
        self._index = index
        self.rules = _IndexedRules(index)
        self.errors = list(index.errors)
        self.wrappers = index.wrappers
        self._ids: dict[str, int] | None = None

    def _index_prefilter(self) -> Prefilter:
        assert self._index is not None
        return self._index.prefilter

    def stamp_once(self) -> None:
        """From now on each rule's file is stat'ed when the prefilter first picks it, not on
        every log: a batch of logs (``ingest``) keeps each rule as it was at its first use
        (the corpus logs pick 24 rules each on average: about 4 % of the rules' time)."""
        self._stamped = set()

    def _reload_if_changed(self, ks: list[int]) -> bool:
        from tracelens.rulebook import index

        stamped = self._stamped
        if stamped is not None:
            ks = [k for k in ks if k not in stamped]
        if self._index is None or not ks or not self._index.changed(ks):
            if stamped is not None:
                stamped.update(ks)
            return False
        self._use(index.get(self._dirs, cache=self._cache, every_file=True))
        self._nearest = self._words = None
        if stamped is not None:
            self._stamped = set()
        return True

    def with_examples(self) -> list[LoadedRule]:
        """The rules that have example logs (from the index, without a look at the others)."""
        if self._index is None:
            return [lr for lr in self.rules if lr.examples]
        return [self.rules[k] for k in self._index.with_examples()]

    def cause_examples(self) -> list[tuple[int, list[str]]]:
        """(position in ``rules``, paths of its example logs) of each rule with examples that
        is not a symptom rule, whose example logs start with the failure the symptom follows;
        from the index, no rule is unpickled for it."""
        if self._index is None:
            return [
                (k, [str(p) for p in lr.examples])
                for k, lr in enumerate(self.rules)
                if lr.examples and not lr.rule.secondary
            ]
        symptoms = self._index.symptoms()
        files = self._index.example_files
        return [(k, files(k)) for k in self._index.with_examples() if k not in symptoms]

    def get(self, rule_id: str) -> LoadedRule | None:
        if self._index is None:
            return next((lr for lr in self.rules if lr.id == rule_id), None)
        if self._ids is None:
            self._ids = {rid: k for k, rid in enumerate(self._index.ids)}
        k = self._ids.get(rule_id)
        return self.rules[k] if k is not None else None


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
    """Pickle ``obj`` into a cache file (:func:`tracelens.paths.write_cache`)."""
    paths.write_cache(path, [pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)])


def load(
    dirs: list[Path] | None = None,
    *,
    strict: bool = True,
    cache: bool = True,
    every_file: bool = True,
) -> RuleSet:
    """Load every rule under ``dirs`` through their compiled index. With ``strict``, the first
    broken file raises :class:`RuleError`; otherwise errors are collected on the RuleSet.
    ``every_file``: check each rule file's stamp against the index, not only each folder's (see
    :mod:`tracelens.rulebook.index` for what the cheaper check misses)."""
    from tracelens.rulebook import index

    dirs = _distinct(dirs) if dirs is not None else rule_dirs()
    idx = index.get(dirs, cache=cache, every_file=every_file)
    if strict and idx.errors:
        raise idx.errors[0]
    return RuleSet.from_index(idx, dirs, cache)


@lru_cache(maxsize=8)
def default_rules(extra: tuple[str, ...] = ()) -> RuleSet:
    """The rules a run uses: shipped, ``TRACELENS_RULES`` and ``extra`` folders, checked
    against their folders' stamps (one stat a folder)."""
    return load(rule_dirs(extra), every_file=False)
