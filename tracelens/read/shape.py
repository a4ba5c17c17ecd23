"""What a failure line shape is (:mod:`tracelens.read.shapes` and the tables beside it hold
them). Standard library only."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    kind: str
    """What failed, e.g. ``cuda``, ``compiler``, ``linker``, ``killed``."""
    pattern: str
    """RE2, searched in the line after its envelope (timestamps, process tags) is removed."""
    samples: tuple[str, ...]
    """Lines real programs print that this shape must match."""
    wrapper: bool = False
    """Reports a failure printed earlier instead of being one."""
    triggers: tuple[bytes, ...] = ()
    """Literals, one of which every matching line holds: the large-log scanner looks for
    them (with its own generic words: ``ERROR``, ``Error``, ``error:`` ...)."""
    quiet_hint: str = ""
    """A literal of the lines this shape finds at a quiet level (INFO, DEBUG): such a line is a
    failure whatever its level. Empty: at a quiet level the shape is not looked for."""
