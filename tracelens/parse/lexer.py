"""The line lexer for tracebacks: one stream's records in, one token per traceback line out.

A small state machine (normal, traceback, message, fault dump) decides what each line is; the
grammar in ``grammars/traceback.lark`` (:mod:`tracelens.parse.traceback`) checks the structure.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import accumulate

from tracelens.models import Record
from tracelens.parse.interleave import unpaired
from tracelens.parse.marks import CAUSE, CONTEXT, CUT_ABOVE, CUT_MARKS, MESSAGE_BLOCK, TB_HEAD
from tracelens.pyregex import compile_re

_FRAME = compile_re(r'\s*File "(?P<file>[^"]*)", line (?P<lineno>\d+)(?:, in (?P<func>.*))?$')
_FAULT_FRAME = compile_re(r'\s*File "(?P<file>[^"]*)", line (?P<lineno>\d+) in (?P<func>.*)$')
_CARET = compile_re(r"\s+[~^]*\^[~^]*\s*$")
_REPEATED = compile_re(r"\s*\[Previous line repeated (?P<n>\d+) more times?\]")
_GROUP_HEAD = compile_re(r"(?P<indent>\s*)\+ Exception Group Traceback \(most recent call last\):")
_FAULT_HEAD = compile_re(r"Fatal Python error: (?P<msg>.*)")
_THREAD_HEAD = compile_re(
    r"(?:(?:Current t|T)hread 0x[\da-fA-F]+ |Stack )\(most recent call first\):"
)
_EXC = compile_re(
    r"(?P<type>[A-Za-z_][\w.]*(?:\[[\w.]*\])?(?:\([\w.]*\))?)(?::(?: (?P<msg>.*)|$))?\Z"
)
_QUOTE = '"""'
# A line that can only be an exception (a type named like one, or BadZipFile ...): never source.
EXCEPTION_LINE = compile_re(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault|Warning"
    r"(?=: .*(?:error|fail)))|BadZipFile|UnsupportedOperation|TimeoutExpired)(?:\([\w.]*\))?): (?P<msg>.+)$"
)
_BARE_EXCEPTION = compile_re(r"(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Exit|Interrupt)$")
_DEDENTED_CARET = compile_re(r"[~^]*\^[~^]*\s*$")
# In a message without a logger header, a line like these starts new output, not more message.
NEW_OUTPUT = compile_re(
    r"\[?[IWEF]\d{3,4} \d\d:\d\d|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d[.,]\d|"
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b|\$ |>>> |```|</?details>|(?:\(\S+\) )?PS [A-Za-z]:\\|"
    r"\S+\.py:\d+: \w*Warning: |\++ (?:(?:exit|echo|set|wait|sleep) |\w+=)|"  # bash's set -x trace
    # a progress bar (tqdm: "Processed prompts:   0%|    | 0/200 [00:00<?, ?it/s]", vLLM's
    # "Loading safetensors checkpoint shards:  50% Completed | 1/2 [...]")
    r".{0,120}?\b\d{1,3}%(?:\|[^|]*\|| Completed \|) *[\d.]+[kMG]?(?:/|it)|"
    # torch 1.x's launcher killing ranks, pytest's titled rules and results ("PASSED  [ 33%]"),
    # Slurm's lines ("srun: error:")
    r"Killing subprocess \d+$|[=_-]{3,} \S.*\S [=_-]{3,}\s*$|srun: |slurmstepd: |"
    r"(?:\S+::\S+ )?(?:PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\b.*\[ ?\d{1,3}%\]\s*$|"
    r'\{"(?:@?timestamp|time|ts|level|severity)": ?"|'  # a structured logger's next record
    r"(?:\(\S+\) )?[\w.-]+@[\w.-]+:\S*[$#](?: |$)"  # a prompt: "(venv) user@host:~/dir$ "
)
# PowerShell wraps a native command's stderr: "python : Traceback …", then these lines (the
# position line in the system's language: "At line:1 char:1", "所在位置 行:1 字符: 1", "In Zeile:1 Zeichen:1")
_PS_WRAPPER = compile_re(
    r"\s*(?:[^\s:]+(?: [^\s:]+)*:\s?\d+\s+(?:[^\s:]+(?: [^\s:]+)?)?\s?:\s?\d+\s*$|\+ |\+ ?~+$|"
    r"\+ (?:CategoryInfo|FullyQualifiedErrorId)\b)"
)
_MAX_LOOKAHEAD = 15
_MAX_MSG_LINES = 400

_KNOWN_TOPS = (
    "vllm",
    "sglang",
    "torch",
    "transformers",
    "ray",
    "triton",
    "flashinfer",
    "xformers",
    "flash_attn",
    "huggingface_hub",
    "safetensors",
    "accelerate",
    "deepspeed",
    "uvicorn",
    "fastapi",
    "starlette",
    "multiprocessing",
    "asyncio",
    "concurrent",
    "importlib",
    "megatron",
    "peft",
    "trl",
    "verl",
    "pytorch_lightning",
    "diffusers",
    "xgrammar",
)

_PYTHON_LIB = compile_re(r"python3(\.\d+)?")


@lru_cache(maxsize=4096)
def module_of(path: str) -> str | None:
    """Dotted module for a frame's file path.

    >>> module_of("/usr/lib/python3.12/dist-packages/vllm/v1/attention/selector.py")
    'vllm.v1.attention.selector'
    >>> module_of("/home/user/src/vllm-main/vllm/vllm/config/__init__.py")
    'vllm.config'
    >>> module_of("/opt/conda/envs/vllm/lib/python3.10/contextlib.py")
    'contextlib'
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
        # a known package counts only below the interpreter's lib/python3.X: a conda env or a
        # venv named "vllm" holds the standard library too (…/envs/vllm/lib/python3.10/contextlib.py)
        lib = [i for i, p in enumerate(parts) if _PYTHON_LIB.fullmatch(p)]
        floor = lib[-1] + 1 if lib else 0
        for i, part in enumerate(parts[:-1]):
            if i >= floor and part in _KNOWN_TOPS:
                start = i
        if start is None:
            start = floor if lib else len(parts) - 1
    mod = [p for p in parts[start:] if p]
    if mod and mod[-1] == "__init__":
        mod.pop()
    return ".".join(mod) or None


def _signature(rec: Record) -> tuple[str | None, str | None]:
    return rec.level, rec.source


class Token(str):
    """A token: its text, its terminal's name (``type``), the log line it starts on and every
    line it spans (an exception group is one token)."""

    __slots__ = ("type", "line", "lines")
    # what Lark's parser reads from a token besides ``type`` (the grammar's differential test
    # runs Lark itself on these tokens)
    column = end_line = end_column = start_pos = end_pos = None

    type: str
    line: int
    lines: list[int]


def _tok(kind: str, text: str, line: int, lines: list[int] | None = None) -> Token:
    tok = Token(text)
    tok.type = kind
    tok.line = line
    tok.lines = lines or [line]
    return tok


def _sep_kind(text: str) -> str | None:
    s = text.strip()
    if s == CAUSE:
        return "CAUSE_SEP"
    if s == CONTEXT:
        return "CONTEXT_SEP"
    return None


_EMPTY_MESSAGE = compile_re(r"[A-Za-z_][\w.]*(?:\([\w.]*\))?:$")
"""An exception line whose message starts with a line break (``raise ImportError("\\n...")``):
its message is the paragraphs below, blank lines and all."""


def _more_message(rec: Record, sig) -> bool:
    """The line after a blank one still belongs to a message of paragraphs: same process and
    logger, not the start of new output, another traceback or a chain separator."""
    text = rec.text
    return (
        _signature(rec) == sig
        and not _sep_kind(text)
        and not text.strip().endswith(TB_HEAD)
        and _GROUP_HEAD.match(text) is None
        and _FAULT_HEAD.match(text) is None
        and _FRAME.match(text) is None
        and NEW_OUTPUT.match(text) is None
    )


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


_OPENING = (TB_HEAD, "+ Exception Group Traceback (most recent call last):", "Fatal Python error: ")


def _openers(records: Sequence[Record]) -> list[int]:
    """Sorted indices of the records that may open something in the normal state: those
    holding a traceback header, an exception group's header or a fault dump's, those right
    above a line of three double quotes alone (an exception whose message quotes a
    traceback), and those right under a fence or a cut mark (frames pasted without their
    header). Every other line, outside a traceback and not right after one, yields nothing:
    :func:`lex` skips them. Found by searching the joined texts for each literal."""
    texts = [rec.text for rec in records]
    joined = "\n".join(texts)
    starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
    found: set[int] = set()
    for literal in (*_OPENING, _QUOTE, *CUT_MARKS):
        pos = joined.find(literal)
        while pos >= 0:
            k = bisect_right(starts, pos) - 1
            if literal in CUT_MARKS:
                found.update([k + 1] if CUT_ABOVE.match(texts[k]) and k + 1 < len(texts) else [])
            elif literal != _QUOTE:
                found.add(k)
            elif k > 0 and texts[k].strip() == _QUOTE:
                found.add(k - 1)
            pos = joined.find(literal, starts[k + 1])
    return sorted(found)


def _exc_head(text: str) -> str:
    """``Type: `` of an exception line (``""`` for a bare type): a message line starting
    with it again is another exception of that type.

    >>> _exc_head("torch.distributed.DistBackendError: [Rank 1] timeout"), _exc_head("KeyError")
    ('torch.distributed.DistBackendError: ', '')
    """
    head, sep, _ = text.partition(": ")
    return head + sep if sep and " " not in head.strip() else ""


def lex(records: Sequence[Record]) -> Iterator[Token]:
    """Tokens for the traceback-shaped lines of one stream; other lines yield nothing."""
    n = len(records)
    i = 0
    state = "normal"
    sig: tuple[str | None, str | None] = (None, None)
    last = ""
    in_quote = False
    msg_lines = 0
    paragraphs = False  # the exception's message began with a line break
    stamped = False  # the exception line carried a timestamp of its own
    exc_head = ""  # "Type: " of the exception line the message belongs to
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

    openers = _openers(records)
    if len(openers) > 1 and (single := unpaired(records, openers)) is not None:
        records, n = single, len(single)
        openers = _openers(records)
    while i < n:
        if state == "normal" and not in_tb_chain and i >= 3:
            # no line before the next opener can start anything: skip to it
            at = bisect_left(openers, i)
            if at == len(openers):
                break
            i = openers[at]
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
                    if not t.startswith(indent) or not t[len(indent) :].lstrip().startswith(
                        ("|", "+")
                    ):
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
                exc_head = _exc_head(text)
                stamped = rec.time is not None
            elif _FAULT_HEAD.match(stripped):
                yield _tok("FAULT_HEAD", stripped, rec.line)
                state = "fault"
            elif (
                (i < 3 or CUT_ABOVE.match(records[i - 1].text) is not None)
                and _FRAME.match(text)
                and i + 1 < n
                and (_FRAME.match(records[i + 1].text) or records[i + 1].text[:1].isspace())
            ):
                # frames with no header above them at the start, under a fence or a cut mark
                yield _tok("TB_HEAD", TB_HEAD, rec.line)
                state, sig, last, margin = "tb", _signature(rec), "head", 0
                continue
            i += 1
        elif state == "tb":
            stripped = text.strip()
            if (
                _signature(rec) != sig
                and (rec.source or rec.level or sig != (None, None))
                and not _FRAME.match(text)
                and not _unprefixed_tail(rec, records, i, last)
            ):
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
            elif last in ("frame", "source", "caret") and (
                _CARET.match(text) or (last == "source" and _DEDENTED_CARET.match(text))
            ):
                yield _tok("CARET", text, rec.line)
                last = "caret"
            elif last == "frame" and _dedented_source(records, i):
                yield _tok("SOURCE", text, rec.line)
                last = "source"
            elif text[:1].isspace():
                if last in ("frame", "source"):
                    yield _tok("SOURCE", text, rec.line)
                    last = "source"
            else:
                yield _tok("EXC", text, rec.line)
                state, sig, in_quote, msg_lines = "msg", _signature(rec), False, 0
                stamped = rec.time is not None
                paragraphs = _EMPTY_MESSAGE.match(stripped) is not None
                exc_head = _exc_head(text)
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
            if exc_head and msg_lines == 0 and text.startswith(exc_head):
                # the same exception line again right below: another process's (ranks whose
                # tracebacks were interleaved line by line), not more of this message
                state, in_tb_chain = "normal", True
                continue
            if rec.time is not None and not stamped:
                # a line with a header of its own ("[time] Received sigquit ...") below an
                # exception line with none: new output, not more message
                state, in_tb_chain = "normal", True
                continue
            if not stripped:
                j = next_significant(i + 1)
                if j < n and _sep_kind(records[j].text):
                    state, in_tb_chain, i = "normal", True, j
                    continue
                if j < n and (paragraphs or MESSAGE_BLOCK.match(records[j].text)):
                    if _more_message(records[j], sig):
                        i = j  # a message of paragraphs (raise X("\n...") or torch.compile's)
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
            if sig == (None, None) and NEW_OUTPUT.match(text):
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


def _dedented_source(records, i: int) -> bool:
    """An unindented line below a frame is its source line when the traceback lost its
    indentation (a paste into an issue or a chat): another frame or a caret follows it, or the
    exception does and it is not one itself."""
    text = records[i].text
    if text[:1].isspace() or not text.strip():
        return False
    stripped = text.strip()
    if EXCEPTION_LINE.match(stripped) or _BARE_EXCEPTION.match(stripped):
        return False
    if i + 1 >= len(records):
        return False
    nxt = records[i + 1].text
    if _FRAME.match(nxt) or _CARET.match(nxt) or _DEDENTED_CARET.match(nxt):
        return True
    nxt = nxt.strip()
    return bool(EXCEPTION_LINE.match(nxt) or _BARE_EXCEPTION.match(nxt) or _EXC.match(nxt))


def _unprefixed_tail(rec: Record, records, i: int, last: str) -> bool:
    """A traceback whose header carried a logger prefix and whose lines lost their indentation:
    the unprefixed source and exception lines below its frames still belong to it (indented,
    they would have been read as the prefixed line's continuation)."""
    if rec.source or rec.level or last not in ("frame", "source", "caret"):
        return False
    if last == "frame" and _dedented_source(records, i):
        return True
    stripped = rec.text.strip()
    return bool(EXCEPTION_LINE.match(stripped) or _BARE_EXCEPTION.match(stripped))
