"""Tracebacks: a line lexer, the Lark grammar in ``grammars/traceback.lark``, a Transformer.

The lexer walks one stream's records with a small state machine (normal, traceback, message,
fault dump) and turns each line that belongs to a traceback into one token; the LALR parser
checks the structure; the Transformer builds :class:`~tracelens.models.Traceback` objects.

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
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import resources

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError
from lark.lexer import Lexer

from .models import ExceptionInfo, Frame, Record, Segment, Traceback

TB_HEAD = "Traceback (most recent call last):"
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"

_FRAME = re.compile(r'\s*File "(?P<file>[^"]*)", line (?P<lineno>\d+)(?:, in (?P<func>.*))?$')
_FAULT_FRAME = re.compile(r'\s*File "(?P<file>[^"]*)", line (?P<lineno>\d+) in (?P<func>.*)$')
_CARET = re.compile(r"\s+[~^]*\^[~^]*\s*$")
_REPEATED = re.compile(r"\s*\[Previous line repeated (?P<n>\d+) more times?\]")
_GROUP_HEAD = re.compile(r"(?P<indent>\s*)\+ Exception Group Traceback \(most recent call last\):")
_FAULT_HEAD = re.compile(r"Fatal Python error: (?P<msg>.*)")
_THREAD_HEAD = re.compile(r"(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):")
_EXC = re.compile(
    r"(?P<type>[A-Za-z_][\w.]*(?:\[[\w.]*\])?(?:\([\w.]*\))?)(?::(?: (?P<msg>.*)|$))?\Z"
)
_QUOTE = '"""'
# In a message without a logger header, a line like these starts new output, not more message.
_NEW_OUTPUT = re.compile(
    r"\[?[IWEF]\d{3,4} \d\d:\d\d|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d[.,]\d|"
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b|\$ |>>> |```|</?details>|(?:\(\S+\) )?PS [A-Za-z]:\\|"
    r"\S+\.py:\d+: \w*Warning: "
)
# PowerShell wraps a native command's stderr: "python : Traceback …", then these lines
_PS_WRAPPER = re.compile(r"\s*(?:At line:\d+ char:\d+|\+ |\+ ?~+$|\+ (?:CategoryInfo|FullyQualifiedErrorId)\b)")
_MAX_LOOKAHEAD = 15
_MAX_MSG_LINES = 400

_KNOWN_TOPS = (
    "vllm", "sglang", "torch", "transformers", "ray", "triton", "flashinfer", "xformers",
    "flash_attn", "huggingface_hub", "safetensors", "accelerate", "deepspeed", "uvicorn",
    "fastapi", "starlette", "multiprocessing", "asyncio", "concurrent", "importlib",
)


def module_of(path: str) -> str | None:
    """Dotted module for a frame's file path.

    >>> module_of("/usr/lib/python3.12/dist-packages/vllm/v1/attention/selector.py")
    'vllm.v1.attention.selector'
    >>> module_of("/home/user/src/vllm-main/vllm/vllm/config/__init__.py")
    'vllm.config'
    >>> module_of("<frozen importlib._bootstrap>")
    'importlib._bootstrap'
    """
    if path.startswith("<frozen ") and path.endswith(">"):
        return path[8:-1]
    if not path.endswith(".py"):
        return None
    parts = path[:-3].replace("\\", "/").split("/")
    start = None
    for i, part in enumerate(parts):
        if part in ("site-packages", "dist-packages"):
            start = i + 1
    if start is None:
        for i, part in enumerate(parts[:-1]):
            if part in _KNOWN_TOPS:
                start = i
        if start is None:
            lib = [i for i, p in enumerate(parts) if re.fullmatch(r"python3(\.\d+)?", p)]
            start = lib[-1] + 1 if lib else len(parts) - 1
    mod = [p for p in parts[start:] if p]
    if mod and mod[-1] == "__init__":
        mod.pop()
    return ".".join(mod) or None


def _signature(rec: Record) -> tuple[str | None, str | None]:
    return rec.level, rec.source


class _Tok(Token):
    """A token that remembers the log line numbers it came from (for exception groups)."""

    __slots__ = ("lines",)


def _tok(kind: str, text: str, line: int, lines: list[int] | None = None) -> Token:
    tok = _Tok(kind, text, line=line)
    tok.lines = lines or [line]
    return tok


def _sep_kind(text: str) -> str | None:
    s = text.strip()
    if s == CAUSE:
        return "CAUSE_SEP"
    if s == CONTEXT:
        return "CONTEXT_SEP"
    return None


def _separator_ahead(records: Sequence[Record], j: int, sig) -> int | None:
    """Index of a chain separator within a few message-like lines from ``j`` (same prefix, no
    new traceback), or None."""
    for k in range(j, min(len(records), j + _MAX_LOOKAHEAD)):
        rec = records[k]
        text = rec.text
        if _sep_kind(text):
            return k
        if _signature(rec) != sig or text.strip().endswith(TB_HEAD) or _FRAME.match(text):
            return None
    return None


def lex(records: Sequence[Record]) -> Iterator[Token]:
    """Tokens for the traceback-shaped lines of one stream; other lines yield nothing."""
    n = len(records)
    i = 0
    state = "normal"
    sig: tuple[str | None, str | None] = (None, None)
    last = ""
    in_quote = False
    msg_lines = 0
    in_tb_chain = False  # the previous token ended a segment (a link may follow)
    margin = 0  # indentation of the current traceback's header

    def next_significant(j: int) -> int:
        while j < n and not records[j].text.strip():
            j += 1
        return j

    def starts_segment(j: int) -> bool:
        if j >= n:
            return False
        t = records[j].text
        return t.strip() == TB_HEAD or bool(_GROUP_HEAD.match(t))

    while i < n:
        rec = records[i]
        text = rec.text
        if margin and state != "normal" and text[:margin].isspace() and len(text) > margin:
            text = text[margin:]
        if state == "normal":
            stripped = text.strip()
            sep = _sep_kind(text) if in_tb_chain else None
            if sep and starts_segment(next_significant(i + 1)):
                yield _tok(sep, text, rec.line)
                i = next_significant(i + 1)
                continue
            in_tb_chain = False
            if stripped.endswith(TB_HEAD) and not _GROUP_HEAD.match(text):
                # also "Scheduler hit an exception: Traceback (most recent call last):" and a
                # header a progress bar left mid-line ("…3.61it/s]Traceback (most recent …")
                yield _tok("TB_HEAD", text, rec.line)
                state, sig, last = "tb", _signature(rec), "head"
                # a traceback printed indented (pip's subprocess output): that indentation is
                # a margin, not part of the traceback's own layout
                margin = len(text) - len(text.lstrip()) if stripped == TB_HEAD else 0
            elif (g := _GROUP_HEAD.match(text)) is not None:
                indent = g.group("indent")
                texts, lines = [text], [rec.line]
                j = i + 1
                while j < n:
                    t = records[j].text
                    if not t.startswith(indent) or not t[len(indent) :].lstrip().startswith(("|", "+")):
                        break
                    texts.append(t)
                    lines.append(records[j].line)
                    j += 1
                yield _tok("GROUP", "\n".join(texts), rec.line, lines)
                in_tb_chain = True
                i = j
                continue
            elif (
                i + 1 < n
                and records[i + 1].text.strip() == _QUOTE
                and not text[:1].isspace()
                and _EXC.match(stripped)
            ):
                # "multiprocessing.pool.RemoteTraceback: " with a quoted traceback below
                yield _tok("EXC", text, rec.line)
                state, sig, in_quote, msg_lines = "msg", _signature(rec), False, 0
            elif _FAULT_HEAD.match(stripped):
                yield _tok("FAULT_HEAD", stripped, rec.line)
                state = "fault"
            elif i < 3 and _FRAME.match(text) and i + 1 < n and (
                _FRAME.match(records[i + 1].text) or records[i + 1].text[:1].isspace()
            ):
                # frames with no header above them at the start: a paste cut mid-traceback
                yield _tok("TB_HEAD", TB_HEAD, rec.line)
                state, sig, last, margin = "tb", _signature(rec), "head", 0
                continue
            i += 1
        elif state == "tb":
            stripped = text.strip()
            if _signature(rec) != sig and (rec.source or rec.level or sig != (None, None)) and not _FRAME.match(text):
                i += 1  # another logger (or unprefixed output) interleaved in the same stream
                continue
            if stripped == TB_HEAD:
                state = "normal"
                continue
            if last == "head" and (not stripped or _PS_WRAPPER.match(text)):
                i += 1  # PowerShell's NativeCommandError block between the header and the frames
                continue
            if not stripped:
                state = "normal"
                i += 1
                continue
            if (m := _REPEATED.match(text)) is not None:
                yield _tok("REPEATED", m.group("n"), rec.line)
                last = "repeated"
            elif _FRAME.match(text):
                yield _tok("FRAME", text, rec.line)
                last = "frame"
            elif last in ("frame", "source", "caret") and _CARET.match(text):
                yield _tok("CARET", text, rec.line)
                last = "caret"
            elif text[:1].isspace():
                if last in ("frame", "source"):
                    yield _tok("SOURCE", text, rec.line)
                    last = "source"
            else:
                yield _tok("EXC", text, rec.line)
                state, sig, in_quote, msg_lines = "msg", _signature(rec), False, 0
            i += 1
        elif state == "msg":
            stripped = text.strip()
            if in_quote:
                yield _tok("MSG", text, rec.line)
                if stripped == _QUOTE:
                    in_quote = False
                i += 1
                continue
            if _signature(rec) != sig and (rec.source or rec.level or sig != (None, None)):
                state, in_tb_chain = "normal", True
                continue
            if not stripped:
                j = next_significant(i + 1)
                if j < n and _sep_kind(records[j].text):
                    state, in_tb_chain, i = "normal", True, j
                    continue
                k = _separator_ahead(records, j, sig)
                if k is not None:
                    # a message with blank lines inside (huggingface_hub's errors), followed by
                    # a chain separator: the lines up to it are still the message
                    for rec2 in records[j:k]:
                        if rec2.text.strip():
                            yield _tok("MSG", rec2.text, rec2.line)
                    state, in_tb_chain, i = "normal", True, k
                    continue
                state, in_tb_chain = "normal", True
                i += 1
                continue
            if (
                _sep_kind(text)
                or (stripped == TB_HEAD and text.startswith("Traceback"))
                or _GROUP_HEAD.match(text)
                or _FAULT_HEAD.match(text)
            ):
                state, in_tb_chain = "normal", True
                continue
            if sig == (None, None) and _NEW_OUTPUT.match(text):
                state, in_tb_chain = "normal", True
                continue
            if msg_lines >= _MAX_MSG_LINES:
                state = "normal"
                continue
            if stripped == _QUOTE:
                in_quote = True
            yield _tok("MSG", text, rec.line)
            msg_lines += 1
            i += 1
        else:  # fault dump
            stripped = text.strip()
            if _THREAD_HEAD.match(stripped):
                yield _tok("THREAD_HEAD", stripped, rec.line)
            elif _FAULT_FRAME.match(text):
                yield _tok("FAULT_FRAME", text, rec.line)
            elif stripped.startswith("Extension modules:"):
                yield _tok("FAULT_NOTE", stripped, rec.line)
            elif not stripped or stripped == "<no Python frame>":
                nxt = next_significant(i + 1)
                if stripped or (
                    nxt < n
                    and (
                        _THREAD_HEAD.match(records[nxt].text.strip())
                        or records[nxt].text.strip().startswith("Extension modules:")
                    )
                ):
                    i += 1
                    continue
                state = "normal"
            else:
                state = "normal"
                continue
            i += 1


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

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "tracelens")
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
    recs = [Record(line=ln, text=_dedent_quoted(t)) for ln, t in zip(lines, texts)]
    return parse_records(recs)


def _dedent_quoted(text: str) -> str:
    return text


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
