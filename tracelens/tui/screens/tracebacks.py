"""The traceback tab: each traceback as a tree of frames (library and plumbing frames folded);
a traceback that several processes printed (folded by the parser, see
:mod:`tracelens.parse.fold`) is shown once, with their ranks and where each copy starts."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Tree

from tracelens.models import Traceback
from tracelens.parse.frames import is_plumbing, is_stdlib
from tracelens.pyregex import compile_re

_RANK = compile_re(r"(?i)(?<![a-z])(rank|tp|dp|pp|ep)[_ ]?(\d+)(?!\d)")
_PID = compile_re(r"\b(?:pid|ip)=\S+")


def is_library(frame) -> bool:
    """Plumbing: the standard library, import machinery, and the generic call/dispatch frames
    that fingerprints skip too (torch.nn call wrappers, multiprocessing, asyncio …)."""
    return is_stdlib(frame) or is_plumbing(frame, keep_module_level=True)


def _spans(numbers: list[int]) -> str:
    """``[0, 1, 2, 3, 5]`` -> ``0-3, 5``."""
    out: list[str] = []
    for n in sorted(set(numbers)):
        if out and n == int(out[-1].rpartition("-")[2]) + 1:
            out[-1] = f"{out[-1].partition('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def ranks(streams: Sequence[str]) -> str:
    """How the processes that printed a traceback are named: ``ranks 0-3`` when each names
    one rank of the same kind, else their names.

    >>> ranks(["trainer-1 / rank2", "trainer-1 / rank0", "trainer-1 / rank1", "trainer-1 / rank3"])
    'ranks 0-3'
    >>> ranks(["Worker_TP7 pid=48537", "Worker_TP0 pid=48530"]), ranks(["a", "b"])
    ('TP ranks 0, 7', 'a, b')
    """
    named = [s for s in streams if s]
    if not named:
        return ""
    found = [_RANK.findall(_PID.sub("", s)) for s in named]
    kinds = {m[-1][0].lower() for m in found if m}
    if all(found) and len(kinds) == 1:
        kind = kinds.pop()
        numbers = [int(m[-1][1]) for m in found]
        if len(named) == 1:
            return named[0]
        return f"{'ranks' if kind == 'rank' else kind.upper() + ' ranks'} {_spans(numbers)}"
    shown = ", ".join(named[:6])
    return shown + (f" and {len(named) - 6} more" if len(named) > 6 else "")


class TracebackTree(Tree):
    """Every traceback of the log, as the parser folded them across processes."""

    def __init__(self, tracebacks: Sequence[Traceback], empty: str, *, id: str | None = None):
        super().__init__(Text("tracebacks"), id=id)
        self.tracebacks = list(tracebacks)
        self.empty = empty
        """What the tab says when there is no traceback."""

    def on_mount(self) -> None:
        self.show_root = False
        if not self.tracebacks:
            self.root.add_leaf(Text(self.empty))
        for tb in self.tracebacks:
            self._add(self.root, tb)
        self.root.expand()

    def _add(self, parent, tb: Traceback) -> None:
        exc = tb.exception
        head = (
            f"{exc.type}: {exc.message.splitlines()[0] if exc and exc.message else ''}"
            if exc
            else "(cut off)"
        )
        where = f"line {tb.start_line}"
        copies = len(tb.lines) > 1
        if copies:
            who = ranks(tb.streams)
            where = f"{who + ' · ' if who else ''}{len(tb.lines)} copies · line {tb.start_line}"
        elif tb.stream:
            where = f"{tb.stream} · line {tb.start_line}"
        node = parent.add(Text(f"[{where}] {head[:150]}", style="bold"), expand=True)
        if copies:
            node.add_leaf(
                Text(f"printed at lines {', '.join(map(str, tb.lines[:20]))}", style="dim")
            )
        for seg in tb.segments:
            if len(tb.segments) > 1 or seg.link:
                label = {
                    "cause": "direct cause of the next",
                    "context": "raised while handling the previous",
                }.get(seg.link or "", "first")
                seg_node = node.add(Text(f"segment ({label})", style="italic"), expand=True)
            else:
                seg_node = node
            group: list = []

            def flush(group: list = group, seg_node=seg_node) -> None:
                if group:
                    lib = seg_node.add(
                        Text(f"{len(group)} library/plumbing frame(s)", style="dim"), expand=False
                    )
                    for f in group:
                        lib.add_leaf(
                            Text(f"{f.module or f.file}:{f.lineno} in {f.function}", style="dim")
                        )
                    group.clear()

            for f in seg.frames:
                if is_library(f):
                    group.append(f)
                    continue
                flush()
                seg_node.add_leaf(Text(f"{f.module or f.file}:{f.lineno} in {f.function}"))
            flush()
            if seg.exception is not None:
                seg_node.add_leaf(
                    Text(f"{seg.exception.type}: {seg.exception.message[:300]}", style="red")
                )
                for sub in seg.exception.nested:
                    self._add(seg_node, sub)
