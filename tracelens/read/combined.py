"""The envelopes of :mod:`tracelens.read.logread` tried as one regex per first character.

An alternation tries its branches in order and nothing follows it, so the branch that matches
is the first envelope that :meth:`re.Pattern.match` would match alone: :meth:`Combined.peel` gives
what :func:`tracelens.read.logread.peel` gives with one regex call a line instead of one per
envelope. Python compiles each alternation in a few milliseconds, so the reader switches to
this only after many lines (``_COMBINE_AFTER`` in logread).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from tracelens.models import Record
from tracelens.pyregex import compile_re

Envelope = Any
"""A :class:`tracelens.read.logread.Envelope` (this module is imported by that one)."""

_GROUP_NAME = compile_re(r"\(\?P<(\w+)>")


def _combined(envs: tuple[Envelope, ...]) -> re.Pattern[str]:
    """One regex trying ``envs`` in order: group ``e<k>`` wraps the k-th, its own groups are
    renamed ``e<k>_<name>``. An alternation tries its branches in order and nothing follows
    it, so the branch that matches is the first envelope that :meth:`re.Pattern.match` would
    match alone: one call a line instead of one per envelope."""
    branches = [
        f"(?P<e{k}>" + _GROUP_NAME.sub(rf"(?P<e{k}_\1>", env.regex) + ")"
        for k, env in enumerate(envs)
    ]
    return compile_re("|".join(branches))


_Keys = tuple[Envelope, str | None, str | None, str | None, str | None]


def _keys(env: Envelope, prefix: str = "") -> _Keys:
    """An envelope with the names of its stream, level, time and source groups."""
    s, lv, t, src = (
        prefix + g if g else None
        for g in (env.stream_group, env.level_group, env.time_group, env.source_group)
    )
    return env, s, lv, t, src


_Combined = tuple[re.Pattern[str], dict[str, _Keys]]


@lru_cache(maxsize=None)
def _combined_keys(envs: tuple[Envelope, ...]) -> _Combined:
    return _combined(envs), {f"e{k}": _keys(env, f"e{k}_") for k, env in enumerate(envs)}


LAUNCHER_LABELS = frozenset({"srun-label", "pdsh-host", "compose-prefix", "mpirun"})
"""Envelopes a launcher puts before each line of the programs it runs: after a logger's level
the message has begun (TensorRT's "[E] 4: [runtime.cpp::...] Error Code 4" is no Slurm task 4)."""


class Combined(dict[str, "_Combined | None"]):
    """The combined regex of each first character, compiled on first use (a dozen distinct
    envelope lists; Python compiles each alternation in a few milliseconds), and the peel that
    uses them. ``by_first``: the envelopes each first character allows, in table order;
    ``stacked``: how often an envelope may occur (once if absent); ``levels``: glog's letters."""

    def __init__(
        self,
        by_first: dict[str, tuple[Envelope, ...]],
        stacked: dict[str, int],
        levels: dict[str, str],
    ):
        super().__init__()
        self.by_first, self.stacked, self.levels = by_first, stacked, levels
        self.plain = {env.name: _keys(env) for envs in by_first.values() for env in envs}
        """Each envelope's own group names, for a match of its regex alone."""

    def __missing__(self, ch: str) -> _Combined | None:
        envs = self.by_first.get(ch)
        if envs is None:
            return None  # not kept: any character may start a line
        got = self[ch] = _combined_keys(envs)
        return got

    def peel(
        self, text: str, line: int, combined: bool = True, untimed: frozenset[str] = frozenset()
    ) -> Record:
        """Peel every envelope at the start of ``text``, in table order, each at most once
        (a process tag at most twice). ``combined``: each step tries the first character's
        alternation, one regex call; else the envelopes one regex at a time (no alternation
        to compile): the same record either way. ``untimed``: envelopes whose first time on
        the line is not the record's (a container runtime's stamp on every line)."""
        streams: list[str] = []
        level = time = source = None
        pos = 0
        used: dict[str, int] = {}
        m: re.Match[str]
        while pos < len(text):
            if combined:
                first = self[text[pos]]
                if first is None:
                    break
                hit = first[0].match(text, pos)
                if hit is None:
                    break  # no envelope matches here, used up or not
                m = hit
                env, s_key, l_key, t_key, src_key = first[1][m.lastgroup or ""]
            if not combined or used.get(env.name, 0) >= self.stacked.get(env.name, 1):
                # one by one: the first envelope not used up that matches here
                found = self._next_unused(text, pos, used)
                if found is None:
                    break
                m, (env, s_key, l_key, t_key, src_key) = found
            if level is not None and env.name in LAUNCHER_LABELS:
                break  # a launcher's label comes before a program's logger header, never after
            if env.name == "srun-label" and "mpirun" in used:
                break  # Open MPI's rank tag, then the program's own "0: [...]" (Horovod's ranks)
            used[env.name] = used.get(env.name, 0) + 1
            if s_key and (stream := m.group(s_key)):
                streams.append(stream)
            if l_key:
                lv = m.group(l_key)
                level = self.levels.get(lv, "WARNING" if lv == "WARN" else lv)
            if t_key and (stamp := m.group(t_key)):
                if env.name not in untimed or used[env.name] > 1:
                    time = time or stamp
            if src_key:
                source = m.group(src_key)
            pos = m.end()
        return Record(
            line=line,
            text=text[pos:] if pos else text,
            stream=" / ".join(streams),
            level=level,
            time=time,
            source=source,
        )

    def _next_unused(
        self, text: str, pos: int, used: dict[str, int]
    ) -> tuple[re.Match[str], _Keys] | None:
        """The first envelope not used up that matches at ``pos``: its match and group names."""
        for env in self.by_first.get(text[pos], ()):
            if used.get(env.name, 0) >= self.stacked.get(env.name, 1):
                continue
            m = env.pattern.match(text, pos)
            if m is not None:
                return m, self.plain[env.name]
        return None
