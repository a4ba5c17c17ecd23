"""One rule file: YAML loading (duplicate keys refused) and validation, with errors that name the
file, line and field; the category names rules may use; where the shipped rules are."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

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


# each pack's categories.yaml as last read: its path -> ((mtime in ns, size), names)
_PACKS: dict[str, tuple[tuple[int, int], frozenset[str]]] = {}


def pack_categories(root: Path) -> frozenset[str]:
    """The categories a rules directory declares in its own ``categories.yaml`` (a user's rule
    pack may add names; none when it has no such file or it cannot be read). Asked for each
    rule file that is validated: the list is read again only when its file changed (a rebuild
    of the index parsed it once per rule, a third of the time)."""
    path = root / "categories.yaml"
    try:
        st = path.stat()
    except OSError:
        return frozenset()
    stamp = (st.st_mtime_ns, st.st_size)
    held = _PACKS.get(str(path))
    if held is None or held[0] != stamp:
        held = _PACKS[str(path)] = (stamp, _read_categories(path))
    return held[1]


def _read_categories(path: Path) -> frozenset[str]:
    yaml, loader = _yaml()
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


def load_rule_file(path: Path, root: Path, data: bytes | None = None) -> Rule:
    """Parse and validate one rule file (``data``: its bytes, when already read); raise
    :class:`RuleError`."""
    yaml, loader = _yaml()
    shown = str(path)
    try:
        text = (path.read_bytes() if data is None else data).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(shown, None, "", f"cannot read ({exc})") from None
    try:
        doc = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleError(
            shown,
            mark.line + 1 if mark else None,
            "",
            f"not valid YAML ({getattr(exc, 'problem', exc)})",
        ) from None
    if not isinstance(doc, dict):
        raise RuleError(shown, 1, "", "a rule file is a YAML mapping")

    def node():  # composed only when an error needs a line number
        return yaml.compose(text, Loader=loader)

    try:
        rule = validate_rule(doc)
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
