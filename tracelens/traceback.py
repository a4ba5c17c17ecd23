"""Tracebacks: the Lark grammar in ``grammars/traceback.lark`` over the tokens of the line
lexer (:mod:`tracelens.tblex`), and a Transformer that builds
:class:`~tracelens.models.Traceback` objects (exception groups and tracebacks quoted in
messages are parsed recursively).

>>> from tracelens.logread import records_from_text
>>> tbs = parse_records(records_from_text('''Traceback (most recent call last):
...   File "/srv/app.py", line 3, in <module>
...     main()
... ValueError: bad value'''))
>>> tbs[0].exception.type, tbs[0].exception.message, tbs[0].frames[0].function
('ValueError', 'bad value', '<module>')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from lark import Lark, Transformer
from lark.exceptions import LarkError
from lark.lexer import Lexer

from .models import ExceptionInfo, Frame, Record, Segment, Traceback
from .tblex import (  # noqa: F401  (module_of and TB_HEAD are part of this module's interface)
    _EXC,
    _FAULT_FRAME,
    _FAULT_HEAD,
    _FRAME,
    _GROUP_HEAD,
    _QUOTE,
    TB_HEAD,
    lex,
    module_of,
)

class _RecordLexer(Lexer):
    """Adapter so Lark can pull tokens from :func:`lex`."""

    def __init__(self, lexer_conf):  # noqa: D401 - Lark's interface
        pass

    def lex(self, data, parser_state=None):  # type: ignore[override]
        return lex(data)


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("tracelens.grammars").joinpath("traceback.lark").read_text()
    return Lark(grammar, parser="lalr", lexer=_RecordLexer, maybe_placeholders=False, cache=_lark_cache())


def _lark_cache() -> str | bool:
    """Where Lark keeps the built parse table between runs (saves building it each time)."""
    import os

    from .paths import cache_home

    path = os.path.join(cache_home(), "tracelens")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    from . import __version__

    return os.path.join(path, f"traceback-grammar-{__version__}.lark-cache")


def _parse_exception(text: str, line: int, more: list[str]) -> ExceptionInfo:
    m = _EXC.match(text.strip())
    if m is None:
        etype, msg = "", text.strip()
    else:
        etype, msg = m.group("type"), (m.group("msg") or "")
    message = "\n".join([msg, *more]) if more else msg
    exc = ExceptionInfo(type=etype, message=message.rstrip(), line=line)
    return exc


class _Build(Transformer):
    """Parse tree -> models."""

    def frame(self, children):
        head = children[0]
        m = _FRAME.match(str(head))
        assert m is not None
        sources = [str(c).strip() for c in children[1:] if c.type == "SOURCE"]
        path = m.group("file")
        return Frame(
            file=path,
            lineno=int(m.group("lineno")),
            function=m.group("func"),
            module=module_of(path),
            source="\n".join(sources) or None,
            line=head.line,
            end_line=max(c.line for c in children),
        )

    def repeated(self, children):
        return ("repeated", int(children[0]))

    def exc(self, children):
        head = children[0]
        more = [str(c) for c in children[1:]]
        if any(m.strip() == _QUOTE for m in more):
            more = [m for m in more if m.strip() != _QUOTE] if _nested_only(more) else more
        exc = _parse_exception(str(head), head.line, more)
        exc.end_line = max(c.line for c in children)
        exc.nested = _nested_tracebacks(children[1:])
        return exc

    def segment(self, children):
        seg = Segment(start_line=children[0].line)
        for child in children[1:]:
            if isinstance(child, Frame):
                seg.frames.append(child)
            elif isinstance(child, tuple) and seg.frames:
                seg.frames[-1].repeated += child[1]
            elif isinstance(child, ExceptionInfo):
                seg.exception = child
        return seg

    def bare(self, children):
        exc = children[0]
        return Segment(exception=exc, start_line=exc.line)

    def group(self, children):
        tok = children[0]
        return _parse_group(str(tok).split("\n"), tok.lines)

    def cause(self, _children):
        return "cause"

    def context(self, _children):
        return "context"

    def traceback(self, children):
        tb = Traceback()
        link = None
        group_end = 0
        for child in children:
            if isinstance(child, str):
                link = child
                continue
            seg = child
            if isinstance(child, Traceback):  # an exception group as a segment
                tb.kind = "group"
                group_end = max(group_end, child.end_line)
                seg = child.segments[0]
            seg.link = link
            link = None
            tb.segments.append(seg)
        first = tb.segments[0]
        tb.start_line = first.start_line
        tb.end_line = max(_last_line(tb), group_end)
        tb.truncated = tb.segments[-1].exception is None
        return tb

    def thread(self, children):
        head = children[0]
        frames = []
        for tok in children[1:]:
            m = _FAULT_FRAME.match(str(tok))
            assert m is not None
            path = m.group("file")
            frames.append(
                Frame(
                    file=path,
                    lineno=int(m.group("lineno")),
                    function=m.group("func"),
                    module=module_of(path),
                    line=tok.line,
                )
            )
        frames.reverse()  # faulthandler prints the most recent call first
        return (str(head).startswith("Current thread"), head.line, frames)

    def fault(self, children):
        head = children[0]
        msg = str(head).split(":", 1)[1].strip()
        threads = [c for c in children[1:] if isinstance(c, tuple)]
        threads.sort(key=lambda t: t[0])  # the current thread last, like a raise
        segs = [Segment(frames=fr, start_line=ln) for _cur, ln, fr in threads]
        if not segs:
            segs = [Segment(start_line=head.line)]
        segs[-1].exception = ExceptionInfo(
            type="Fatal Python error", message=msg, line=head.line
        )
        tb = Traceback(kind="faulthandler", segments=segs, start_line=head.line)
        tb.end_line = _last_line(tb)
        return tb

    def start(self, children):
        return [c for c in children if isinstance(c, Traceback)]


def _last_line(tb: Traceback) -> int:
    last = tb.start_line
    for seg in tb.segments:
        last = max(last, seg.start_line, *(max(f.line, f.end_line) for f in seg.frames), 0)
        if seg.exception:
            last = max(last, seg.exception.line, seg.exception.end_line)
    return last


def _nested_tracebacks(msg_tokens) -> list[Traceback]:
    """Tracebacks quoted inside an exception message (RemoteTraceback, Ray task errors)."""
    texts = [str(t) for t in msg_tokens if str(t).strip() != _QUOTE]
    if not any(_FRAME.match(t) or t.strip().endswith(TB_HEAD) for t in texts):
        return []
    lines = [t.line for t in msg_tokens if str(t).strip() != _QUOTE]
    if not any(t.strip().endswith(TB_HEAD) for t in texts):  # e.g. "Original Traceback (…):"
        # Ray prints frames without a header: give them one.
        first = next(k for k, t in enumerate(texts) if _FRAME.match(t))
        texts.insert(first, TB_HEAD)
        lines.insert(first, lines[first])
    recs = [Record(line=ln, text=t) for ln, t in zip(lines, texts)]
    return parse_records(recs)


def _nested_only(lines: list[str]) -> bool:
    """The message is a quoted traceback (nothing but quotes around it)."""
    return bool(lines) and lines[0].strip() == _QUOTE

_GROUP_SEP = re.compile(r"\+(?:-\+)?-+(?: (?P<n>\d+|\.\.\.) -+)?\s*$")


def _parse_group(texts: list[str], lines: list[int]) -> Traceback:
    """An exception group block (the ``|``-margined form) -> a Traceback whose exception
    carries the member exceptions as nested tracebacks."""
    indent = _GROUP_HEAD.match(texts[0]).group("indent")  # type: ignore[union-attr]
    margin = len(indent)
    main: list[Record] = [Record(line=lines[0], text=TB_HEAD)]
    members: list[list[Record]] = []
    k = 1
    while k < len(texts):
        body = texts[k][margin:]
        if body.startswith("| "):
            main.append(Record(line=lines[k], text=body[2:]))
            k += 1
            continue
        if body.startswith("|"):
            main.append(Record(line=lines[k], text=body[1:]))
            k += 1
            continue
        break
    # members: lines indented two more, separated by "+---- N ----" lines
    inner = margin + 2
    current: list[Record] | None = None
    while k < len(texts):
        t = texts[k]
        body = t[margin:]
        stripped = body.strip()
        sep = body.lstrip()
        if sep.startswith("+") and _GROUP_SEP.match(sep) and len(body) - len(sep) <= 2:
            if current:
                members.append(current)
            current = [] if re.search(r"\d+ -+\s*$|\.\.\. -+\s*$", sep) else None
            k += 1
            continue
        if current is not None:
            sub = t[inner:] if len(t) > inner else ""
            if sub.startswith("| "):
                sub = sub[2:]
            elif sub.startswith("|"):
                sub = sub[1:]
            current.append(Record(line=lines[k], text=sub))
        elif not stripped:
            pass
        k += 1
    if current:
        members.append(current)
    parsed = parse_records(main)
    if parsed:
        tb = parsed[0]
    else:
        tb = Traceback(segments=[Segment(start_line=lines[0])], start_line=lines[0])
    tb.kind = "group"
    exc = tb.exception
    if exc is None:
        exc = ExceptionInfo(type="ExceptionGroup", line=lines[0])
        tb.segments[-1].exception = exc
        tb.truncated = False
    for member in members:
        sub_tbs = parse_records(member)
        if sub_tbs:
            exc.nested.extend(sub_tbs)
        else:
            # a member printed with no traceback: just "ValueError: msg"
            for rec in member:
                if rec.text.strip():
                    e = _parse_exception(rec.text, rec.line, [])
                    exc.nested.append(
                        Traceback(
                            segments=[Segment(exception=e, start_line=rec.line)],
                            start_line=rec.line,
                            end_line=rec.line,
                        )
                    )
                    break
    tb.end_line = max(lines)
    return tb


def _has_trigger(records: Sequence[Record]) -> bool:
    for r in records:
        t = r.text
        if "Traceback (most recent call last):" in t or "Fatal Python error" in t or (
            "Exception Group Traceback" in t or t.strip() == _QUOTE or ('File "' in t and ", line " in t)
        ):
            return True
    return False


def parse_records(records: Sequence[Record]) -> list[Traceback]:
    """All tracebacks (and faulthandler dumps) in one stream's records, in order."""
    if not _has_trigger(records):
        return []

    try:
        tree = _parser().parse(records)  # type: ignore[arg-type]
    except LarkError:
        return _parse_tolerant(records)
    return _Build().transform(tree)


def _parse_tolerant(records: Sequence[Record]) -> list[Traceback]:
    """Fallback when the token stream is not well-formed: parse each traceback on its own,
    splitting at every header, so one odd line never loses the rest."""
    out: list[Traceback] = []
    starts = [
        k
        for k, r in enumerate(records)
        if r.text.strip() == TB_HEAD or _FAULT_HEAD.match(r.text.strip()) or _GROUP_HEAD.match(r.text)
    ]
    for a, b in zip(starts, starts[1:] + [len(records)]):
        try:
            tree = _parser().parse(records[a:b])  # type: ignore[arg-type]
            out.extend(_Build().transform(tree))
        except LarkError:
            continue
    return out
