"""Line prefixes that a log's own lines show to be wrappers, when no envelope knows them:
host labels a launcher repeats (:func:`host_labels`) and collectors' prefixes (:func:`unwrap`).

Logs reach tracelens through many collectors, each with its own line prefix: ``stern``'s
``pod container``, Loki's labels, ``aws logs tail``'s stream name, Airflow's task-log header,
``journalctl -o short-iso``, a launcher's ``[host]``. An unknown prefix before every line hides
the tracebacks (a header no longer starts its line) and halves what is recognized. Rather than
guess at every collector, the log shows its own prefix: where a line holds a traceback header
or a vLLM logger header after text the envelopes left, that text is a prefix; its shape (digit
runs and level words made variable) is then peeled wherever a line starts with it.

>>> from tracelens.read.logread import peel, records_from_text
>>> log = ("vllm-0 main Traceback (most recent call last):\\n"
...        'vllm-0 main   File "/srv/app.py", line 3, in <module>\\n'
...        "vllm-0 main RuntimeError: boom\\n")
>>> [r.text for r in unwrap(records_from_text(log), peel)]
['Traceback (most recent call last):', '  File "/srv/app.py", line 3, in <module>', 'RuntimeError: boom']
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from tracelens.models import Record
from tracelens.pyregex import compile_re

_TB = "Traceback (most recent call last)"
_VLLM = compile_re(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+\.py:\d+\] "
)
"""vLLM's logger header (``INFO 05-01 10:00:00 [api_server.py:12] ``, also without the
bracket), the most frequent line start of a serving log."""
_TOKENS = compile_re(
    r"\d+|\b(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)\b|.", re.S
)
_LEVELS = frozenset("TRACE DEBUG INFO NOTICE WARNING WARN ERROR CRITICAL FATAL".split())
_MAX_PREFIX = 200
_MAX_SHAPES = 32


def _tokens(text: str) -> list[str]:
    """``text`` as digit runs, level words and single characters."""
    return _TOKENS.findall(text)


def _shape(tokens: list[str]) -> str:
    """A regex for the prefix with its digit runs and level words variable.

    >>> _shape(_tokens("2024-05-01T10:00:00Z node7 INFO - "))
    '\\\\d+\\\\-\\\\d+\\\\-\\\\d+T\\\\d+:\\\\d+:\\\\d+Z\\\\ node\\\\d+\\\\ [A-Z]+\\\\ \\\\-\\\\ '
    """
    return "".join(
        r"\d+" if t[0].isdigit() else "[A-Z]+" if t in _LEVELS else re.escape(t) for t in tokens
    )


def _kind(token: str) -> str:
    return "0" if token[0].isdigit() else "L" if token in _LEVELS else token


_MAYBE_WRAPPED = compile_re(
    r"[^\n]Traceback \(most recent call last\)|[^\n](?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d "
)
"""One of the headers :func:`_anchor` looks for, after the start of a line: without one in the
text no record can show a wrapper."""


def may_be_wrapped(text: str) -> bool:
    """Whether :func:`unwrap` can find anything in the records of ``text`` (a cheap search of
    the whole text before a look at each record)."""
    return _MAYBE_WRAPPED.search(text) is not None


def _anchor(text: str) -> int:
    """Where a traceback or vLLM logger header starts in ``text`` after its first character,
    or -1."""
    at = text.find(_TB, 1)
    if at < 0 and "] " in text:
        m = _VLLM.search(text, 1)
        at = m.start() if m else -1
    return at if 0 < at <= _MAX_PREFIX else -1


def _common(line: str, after: str) -> list[str]:
    """The tokens ``line`` and the line after it start with, digit runs and level words
    compared by kind: the wrapper both carry (a traceback's next line carries it too)."""
    a, b = _tokens(line), _tokens(after[: len(line) + 40])
    n = 0
    while n < len(a) and n < len(b) and _kind(a[n]) == _kind(b[n]):
        n += 1
    return a[:n]


_TIME = compile_re(r"\d:\d")


def learn(records: list[Record]) -> tuple[re.Pattern[str], list[str]] | None:
    """The prefix shapes the log shows, as one regex whose group ``p<k>`` is the k-th shape,
    and each shape's stream name (the prefix itself when it holds no time of day, such as a
    host or a pod: else empty); ``None`` when the log shows none. A shape is the text before
    a traceback or vLLM logger header that the line after it starts with too."""
    shapes: dict[str, str] = {}
    for k, rec in enumerate(records[:-1]):
        at = _anchor(rec.text)
        if at <= 0 or rec.text[:at].isspace():
            continue
        common = _common(rec.text[:at], records[k + 1].text)
        while len(common) > 1 and common[-1].isspace() and common[-2].isspace():
            common.pop()  # one separator: more is the next line's indentation
        if any(t.isalnum() for t in common):  # not an exception group's "  | " or a box
            prefix = "".join(common)
            shapes.setdefault(_shape(common), "" if _TIME.search(prefix) else prefix.strip())
            if len(shapes) >= _MAX_SHAPES:
                break
    if not shapes:
        return None
    ordered = sorted(shapes, key=len, reverse=True)
    # built from this log's own lines: compiled by re (its cache), not kept between runs
    pattern = re.compile("|".join(f"(?P<p{k}>{shape})" for k, shape in enumerate(ordered)))
    return pattern, [shapes[shape] for shape in ordered]


def unwrap(
    records: list[Record], peel: Callable[[str, int], Record], constant: str = ""
) -> list[Record]:
    """``records`` with the learned prefixes peeled (and any envelope after them): the stream
    the envelope before the prefix gave, the prefix's name, the stream after it; the time and
    level kept where the envelope before the prefix gave them."""
    learned = None if constant else learn(records)
    if learned is None:
        pre = constant or constant_prefix([(r.line, r.text) for r in records[:64]], peel)
        if not pre:
            return records
        learned = re.compile(f"(?P<p0>{re.escape(pre)})"), [pre.strip()]
    shapes, names = learned
    out: list[Record] = []
    for rec in records:
        m = shapes.match(rec.text)
        if m is None or m.end() == len(rec.text):
            out.append(rec)
            continue
        out.append(_behind(rec, m.end(), names[int((m.lastgroup or "p0")[1:])], peel))
    return out


def _behind(rec: Record, at: int, name: str, peel: Callable[[str, int], Record]) -> Record:
    """``rec`` with the prefix that ends at ``at`` taken as the stream ``name`` and the
    envelopes after it peeled: the streams joined outside in, the time and level the
    envelope before the prefix gave kept."""
    inner = peel(rec.text[at:], rec.line)
    return Record(
        line=rec.line,
        text=inner.text,
        stream=" / ".join(s for s in (rec.stream, name, inner.stream) if s),
        level=inner.level or rec.level,
        time=rec.time or inner.time,
        source=inner.source or rec.source,
    )


_LABEL = compile_re(r"^([A-Za-z0-9][\w.-]{0,62}): (?=\S| {2}|\[)", re.M)
"""A line starting with a name and ``": "``: a host label (``pdsh``, ``parallel --tag``,
``ansible``) or an exception, a logger, a compiler's ``note:``."""
_NOT_A_HOST = compile_re(
    r"(?i:error|exception|warning|warn|exit|interrupt|iteration|fault|failed)$"
    r"|^(?:python[\d.]*|pip\d*|collect2|nvcc|ld|gcc[\w.-]*|g\+\+|clang[\w.-]*|cc1\w*)$"
    r"|\.[A-Z][^.]*$|^[0-9a-f]{12}$"
)
"""Names that are not hosts: exception classes (``torch._dynamo.exc.Unsupported``: a dotted
name whose last part is capitalized), tools that print their name first, a container image
layer's id (``docker pull``'s "3f4ca61aafcd: Pull complete")."""


_ROLE = compile_re(r"^([A-Za-z][\w.-]{0,62}/\d{1,4}) (?=\S)", re.M)
"""A line starting with a role and replica (``trainer/0 ``): TorchX's and NeMo-Run's logs of
a job's processes (a name first: Keras's "10/10 [=====] - loss: ..." is progress)."""


def host_labels(text: str) -> re.Pattern[str] | None:
    """The host labels that start this log's lines, when it has them, as one regex.

    A launcher that runs a command on many machines (``pdsh``, DeepSpeed's multi-node runner,
    ``parallel --tag``) puts the machine's name before each of its lines. Names ending in
    ``-<digits>`` or addresses are an envelope of their own (``pdsh-host``); any other name
    (``node1``, ``gpu-b``, ``worker.cluster.local``) is taken as a label only when the log
    shows it to be one: a name with a digit, a hyphen or a dot that is not an exception, on
    at least two lines, the names together starting at least 3 lines (or every line of a
    shorter log) and 30 % of them.

    >>> host_labels("node1: Traceback (most recent call last):\\nnode1:   File \\"a.py\\"\\n"
    ...             "node2: RuntimeError: boom\\nnode2: RuntimeError: boom\\n").pattern
    '(?P<h>node1|node2): '
    >>> host_labels("trainer/0 srun: error: node-3: task 0: Exited with exit code 1\\n" * 3).pattern
    '(?P<r>trainer/0) '
    >>> host_labels("torch._dynamo.exc.Unsupported: x\\ntorch._dynamo.exc.Unsupported: y\\n") is None
    True
    """
    counts: dict[str, int] = {}
    for name in _LABEL.findall(text) if ": " in text else ():
        counts[name] = counts.get(name, 0) + 1
    for role in _ROLE.findall(text) if "/" in text else ():  # a "/": never a host's label
        counts[role] = counts.get(role, 0) + 1
    names = sorted(
        n
        for n, c in counts.items()
        if c >= 2 and any(ch.isdigit() or ch in "-." for ch in n) and not _NOT_A_HOST.search(n)
    )
    covered = sum(counts[n] for n in names)
    lines = text.count("\n") + (not text.endswith("\n"))
    if not names or covered < min(3, lines) or covered < 0.3 * lines:
        return None
    hosts = "|".join(re.escape(n) for n in names if "/" not in n)
    roles = "|".join(re.escape(n) for n in names if "/" in n)
    parts = ([f"(?P<h>{hosts}): "] if hosts else []) + ([f"(?P<r>{roles}) "] if roles else [])
    return re.compile("|".join(parts))


def labelled(
    one: Callable[[str, int], Record], labels: re.Pattern[str], raw: str, n: int
) -> Record:
    """A line peeled as usual, or, when no envelope matched and it starts with a host label,
    with the label as its stream and the envelopes after the label peeled."""
    rec = one(raw, n)
    if len(rec.text) != len(raw) or (m := labels.match(raw)) is None:
        return rec  # an envelope was peeled, or no label
    return _behind(rec, m.end(), m[m.lastgroup or 0], one)


CONTAINER_STAMP = compile_re(
    r".{0,80}?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?[ \t]"
)
"""The ``iso-timestamp`` envelope, after any prefix a collector put before it."""


def container_stamped(lines: list[tuple[int, str]]) -> bool:
    """Whether the container runtime stamped every line (``docker logs --timestamps``,
    ``kubectl logs --timestamps``): its time, on the traceback's lines too, says nothing of
    which lines the program headed itself, so the records keep only the program's own time
    (what tells "[time] Received sigquit ..." from more of an exception's message). Blank
    lines and the segments after a bare ``\r`` are not asked.

    >>> container_stamped([(1, "2025-11-20T13:00:01.5Z [2025-11-20 13:00:01] up"), (2, "2025-11-20T13:00:02Z x")])
    True
    >>> container_stamped([(1, "2025-11-20T13:00:01Z ERROR boom"), (2, "Traceback (most recent call last):")])
    False
    """
    prev = 0
    for n, raw in lines:
        if n != prev and raw.strip() and CONTAINER_STAMP.match(raw) is None:
            return False
        prev = n
    return bool(lines)


_NAME = compile_re(r"[A-Za-z][\w.]*-\d[\w.-]*")
"""A stream or host name alone (``algo-1-1714557600``, ``vllm-0``): letters, then a dash and a
digit."""
NCCL_DEBUG = compile_re(r"(?<![\w.:-])([\w.-]+:\d+):\d+ \[\d+\] ")
"""NCCL's own prefix (``host:pid:tid [dev] ``): group 1 is the process each line comes from
(searched for, it is found behind a collector's prefix too)."""


_QUOTED_KEY = compile_re(r"""['"][\w.-]+['"]: """)
"""A quoted key and a colon: a Python dict's or JSON object's (a collector's labels are
``key="value"``)."""


def constant_prefix(lines: list[tuple[int, str]], peel: Callable[[str, int], Record]) -> str:
    """The text every line starts with (nine in ten lines at least, five lines or more), up to
    its last space, when it holds a letter or digit and no envelope knows it: a collector's
    prefix that is the same on every line (``stern`` on one pod, a CI job's name), which
    hides every line's start from the failure shapes; '' when there is none.

    >>> peel = lambda raw, n: Record(line=n, text=raw)
    >>> constant_prefix([(n, f"vllm-7d9f5c6b8-x2x4q vllm {n} up") for n in range(6)], peel)
    'vllm-7d9f5c6b8-x2x4q vllm '
    >>> constant_prefix([(n, f"Epoch 1 step {n} loss 0.{n}") for n in range(6)], peel)
    ''
    >>> constant_prefix([(n, f"{{'loss': 0.0, 'epoch': 0.{n}}}") for n in range(6)], peel)
    ''
    """
    raws = [raw for _, raw in lines if raw.strip()]
    if len(raws) < 5:
        return ""
    common = os.path.commonprefix(raws[:64])
    cut = max(common.rfind(" "), common.rfind("\t")) + 1
    prefix = common[:cut]
    words = prefix.split()
    one_name = len(words) == 1 and (
        (words[0][:1] in "[(<{" and words[0][-1:] in "])>}")
        or _NAME.fullmatch(words[0]) is not None
    )
    if (
        (len(words) < 2 and not one_name)
        or words[0].isalpha()
        or not any(ch.isalnum() for ch in words[0])
    ):
        return ""  # a name and more (a pod and its container), one name ("[host]", "algo-1")
    if NCCL_DEBUG.match(prefix) or _QUOTED_KEY.search(prefix):
        return ""  # NCCL's own prefix; the start of a dict each line prints ("{'loss': 0.1, ...")
    if sum(raw.startswith(prefix) for raw in raws) < 0.9 * len(raws):
        return ""
    return prefix if peel(raws[0], 0).text == raws[0] else ""  # an envelope's: peeled as one


_STAMP = compile_re(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?(?= )")
"""An RFC 3339 time at the start of a line, as a log collector writes it before each line."""


def time_ordered(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines in time order when a collector listed them newest first (Loki's ``logcli
    query`` does by default, as do many log viewers' exports): nearly every line starts with an
    RFC 3339 time of one format, and the times never rise and fall at least once. Put in time
    order they are numbered from the first line's number, one a line (as a JSON export put back
    in order is); any other log is returned as it is.

    >>> time_ordered([(1, "2026-01-02T03:04:06Z b"), (2, "2026-01-02T03:04:05Z a")])
    [(1, '2026-01-02T03:04:05Z a'), (2, '2026-01-02T03:04:06Z b')]
    """
    if len(lines) < 2 or not lines[0][1][:4].isdigit():
        return lines
    prev = ""
    fell = False
    for _n, text in lines:  # a log in time order stops at its first rising time
        m = _STAMP.match(text)
        if m is None:
            if text.strip():
                return lines  # a line without the collector's time: not one collector's listing
            continue
        stamp = m.group(0)
        if prev and (len(stamp) != len(prev) or stamp[-1] != prev[-1]):
            return lines  # times of several formats (or zones): their order cannot be read as text
        if prev and stamp > prev:
            return lines
        fell = fell or (bool(prev) and stamp < prev)
        prev = stamp
    if not fell:
        return lines
    first = lines[0][0]
    return [(first + k, text) for k, (_n, text) in enumerate(reversed(lines))]
