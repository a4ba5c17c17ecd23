"""Is this file a log? A cheap look at its first bytes, never at its name alone: a log can be
called anything (``*.log``, ``*.txt``, ``*.out``, ``*.err``, no extension), and ``ENV.txt`` or
``requirements.txt`` are not logs.

The check errs towards "a log": a file is skipped only when its first bytes are clearly
something else (empty, binary, an image, a JSON document, a requirements list,
environment variables, a PyTorch environment report, a YAML document). A text file that shows
any sign of a log (a timestamp or a level at the start of a line, a process tag, a traceback,
an exception line, a failure line of :mod:`tracelens.read.failures`) is a log, and so is any
text file larger than :data:`HEAD`: only its first bytes are read, and those of a long log
may well be a configuration dump.

>>> not_a_log(b"torch==2.5.1\\nvllm>=0.6\\n")
'a requirements list (package==version lines)'
>>> not_a_log(b"INFO 09-11 06:20:31 [__init__.py:241] Automatically detected platform cuda.\\n")
>>> not_a_log(b"")
'empty'
"""

from __future__ import annotations

import json
import re

from tracelens.pyregex import compile_re
from tracelens.read.failures import failure_kind
from tracelens.read.formats import NOT_LOGS
from tracelens.read.logread import decode, sniff_encoding

HEAD = 64 << 10
"""Bytes read from the start of a file to decide (a text file larger than this is a log)."""
SAMPLE = 4 << 10
"""Bytes looked at for binary content."""

MAGIC = NOT_LOGS
"""(offset, bytes, what the file is): file formats recognised by their first bytes (a
compressed log is decompressed before it is looked at: :mod:`tracelens.read.formats`)."""

_BAD = compile_re("[\ufffd\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
"""Characters text does not hold: undecodable bytes and control characters (tab, newline,
carriage return, form feed and escape are text)."""

_TEXT_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\x0b\x0c\r\x1b"
"""ASCII bytes that decode to characters :data:`_BAD` does not match: a UTF-8 sample of
nothing else holds no character text does not hold (the common case, told by one
``bytes.translate`` instead of a regex over the decoded sample)."""

_PREFIX = r"^[ \t]*(?:[\w.-]{1,40}[ \t]+\|[ \t]+)?(?:\[[\w .:-]{1,30}[\] ])?"
"""What may stand before a log line's own start: indentation, a compose service ``vllm-1 |``,
a bracketed tag such as ``[taskcluster ``."""
_SIGNAL = compile_re(
    _PREFIX
    + r"""(?:
        [\[(]?\d{4}[-/]\d\d[-/]\d\d(?:[T ]\d\d:\d\d)?   # 2025-07-01T05:05:58
      | [\[(]?\d\d:\d\d:\d\d                            # 05:05:58
      | [A-Z][a-z]{2}\ [ \d]\d\ \d\d:\d\d:\d\d          # syslog: Dec  1 10:12:13
      | [IWEF]\d{4}\ \d\d:\d\d:\d\d                     # glog: I0701 05:05:58
      | [\[(]?(?:INFO|WARN|WARNING|ERROR|DEBUG|CRITICAL|FATAL|TRACE|NOTICE)\b
      | \((?:\w+\ )?pid=\d+\)                           # (APIServer pid=1)
      | \[(?:rank|RANK)\ ?\d+\]                         # [rank0]:
      | \[\d+(?:,[^\]\s]+)?\]<std                       # mpirun, horovodrun
      | Traceback\ \(most\ recent\ call\ last\)
      | (?:[\w.]+\.)?\w*(?:Error|Exception)\b           # RuntimeError: ...
      | \S+\.py:\d+:\ \w                                # train.py:12: UserWarning: ...
    )
    | \blevel=\w+ | \btime="?\d{4}-                      # logfmt, anywhere
    """,
    re.MULTILINE | re.VERBOSE,
)
"""Signs of a log: one is enough."""

_COMMENT = compile_re(r"^\s*(?:#.*)?$")
_REQUIREMENT = compile_re(
    r"""^\s*(?:
        -[-\w]+(?:[\s=]\S+)?                                   # -r other.txt, --index-url URL
      | [A-Za-z0-9][\w.-]*(?:\[[\w,.\ -]*\])?\s*               # name[extra]
        (?:(?:===|==|>=|<=|~=|!=|<|>)\s*[\w.*+!-]+
           (?:\s*,\s*(?:===|==|>=|<=|~=|!=|<|>)\s*[\w.*+!-]+)*)?
        (?:\s*@\s*\S+)?(?:\s*;.*)?
    )\s*(?:\#.*)?$""",
    re.VERBOSE,
)
_PINNED = compile_re(r"(?:===|==|>=|<=|~=|!=|<|>|\s@\s)")
_ENV_LINE = compile_re(r"^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=")
_YAMLISH = compile_re(r"^(?:---|%YAML|[\w.\"'-]+:(?:\s|$)|- )")


def _shape(text: str) -> str | None:
    """What a text without signs of a log is instead, or None."""
    body = text.strip()
    if body[:1] in ("{", "["):
        try:
            json.loads(body)
            return "a JSON document"
        except ValueError:
            return None  # JSON lines (one record a line) are a log
    lines = [ln for ln in body.splitlines() if not _COMMENT.match(ln)]
    if not lines:
        return "only comments"
    if all(_REQUIREMENT.match(ln) for ln in lines) and any(_PINNED.search(ln) for ln in lines):
        return "a requirements list (package==version lines)"
    if sum(1 for ln in lines if _ENV_LINE.match(ln)) >= 0.9 * len(lines):
        return "environment variables (NAME=value lines)"
    if any(failure_kind(ln) for ln in lines):
        return None
    if "Collecting environment information" in body or (
        "PyTorch version:" in body and "Is debug build:" in body
    ):
        return "a PyTorch environment report (collect_env output)"
    if _YAMLISH.match(lines[0]):
        import yaml

        try:
            doc = yaml.load(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return None
        if isinstance(doc, (dict, list)) and len(doc) >= 1:
            return "a YAML document"
    return None


def not_a_log(head: bytes, size: int | None = None) -> str | None:
    """Why a file whose first bytes are ``head`` (at most :data:`HEAD` of them; ``size``: the
    file's whole size, ``len(head)`` when not given) is not a log; ``None`` when it is one."""
    size = len(head) if size is None else size
    if size == 0:
        return "empty"
    for offset, magic, what in MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return what
    encoding, bom = sniff_encoding(head[:4])
    raw = head[bom:SAMPLE]
    if encoding != "utf-8" or raw.translate(None, _TEXT_ASCII):  # else plain text, no search
        sample = raw.decode(encoding, "replace")
        if len(sample) > 16 and len(_BAD.findall(sample)) > 0.1 * len(sample):
            return "binary data"
    text = decode(head[bom:], encoding)
    if not text.strip():
        return "blank (only whitespace)" if size <= len(head) else None
    if size > len(head) or _SIGNAL.search(text):
        return None
    return _shape(text)
