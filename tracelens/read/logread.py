"""bytes -> lines -> records.

Decodes any bytes without failing, strips terminal control sequences, splits lines, and peels
envelopes (container timestamps, kubectl/compose prefixes, process tags, logger headers) from
a table of formats tried in order. Nothing is dropped: a line no format knows is kept whole.

>>> [r.text for r in records_from_bytes(b"a\\r\\nb\\rc\\n")]
['a', 'b', 'c']
>>> r = records_from_bytes(b"(EngineCore_DP0 pid=245) ERROR 01-20 13:03:50 [core.py:700] boom")[0]
>>> (r.stream, r.level, r.source, r.text)
('EngineCore_DP0 pid=245', 'ERROR', 'core.py:700', 'boom')
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, partial

from tracelens.models import Record
from tracelens.read import prefixes, rewrap
from tracelens.read.combined import Combined

# CSI (colours, cursor moves), OSC (titles, hyperlinks), other two-byte escapes, then any C0
# control left over except tab.
_ANSI = re.compile(
    # CSI; OSC, DCS, SOS, PM and APC strings (Buildkite stamps lines with "\x1b_bk;t=...\x07");
    # two-character escapes; other control characters
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]P^X_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f]"
)
_GITLAB_SECTION = re.compile(r"(?:\x1b\[0K)?section_(?:start|end):\d+:[\w.-]+(?:\[[^\]]*\])?")
"""GitLab CI's collapsible-section markers, each alone before a bare CR in the raw trace."""
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """Return (encoding, BOM length) for the start of a log.

    >>> sniff_encoding(codecs.BOM_UTF16_LE + "x".encode("utf-16-le"))
    ('utf-16-le', 2)
    >>> sniff_encoding(b"plain")
    ('utf-8', 0)
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name, len(bom)
    return "utf-8", 0


def clean(text: str) -> str:
    """Remove ANSI escape sequences and control characters (tab kept).

    >>> clean("\\x1b[1;31mERROR\\x1b[0m x\\x00")
    'ERROR x'
    """
    if "\x1b" not in text and not _HAS_CTRL.search(text):
        return text
    return _ANSI.sub("", text)


_HAS_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_HAS_CTRL_IN_LINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""What :func:`clean` removes, less the line ends (a line split off a text holds none)."""


# --- envelopes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Envelope:
    """One envelope format: an anchored regex and what its groups mean."""

    name: str
    regex: str
    """Matched where the line (or the previous envelope) ends."""
    stream_group: str | None = None
    """Group naming the process/stream."""
    level_group: str | None = None
    time_group: str | None = None
    source_group: str | None = None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`regex` compiled when a line first tries it: a log tries only the envelopes
        its lines' first characters allow, and Python takes about half a millisecond to
        compile each."""
        return re.compile(self.regex)


_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)"
_GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}

ENVELOPES: tuple[Envelope, ...] = (
    # a log copied from a web UI with its line numbers: "  1234\t"
    Envelope("line-number", r" *\d{1,7}\t"),
    # syslog / journalctl: "Nov 29 03:14:12 gpu-node-7 python3[48211]: "
    Envelope(
        "syslog",
        (
            r"(?P<t>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}) "
            r"[\w.-]+ (?P<s>[\w.@/-]+(?:\[\d+\])?): "
        ),
        stream_group="s",
        time_group="t",
    ),
    # Open MPI --tag-output: "[1,0]<stderr>:"
    Envelope("mpirun", r"\[(?P<s>\d+,\d+)\]<(?:stdout|stderr|stddiag)>:", stream_group="s"),
    # Slurm srun --label: "3: "
    Envelope("srun-label", r"(?P<s>\d{1,4}): (?=\S| {2}|\t)", stream_group="s"),
    # kubectl logs --prefix: "[pod/vllm-0/vllm] "
    Envelope("kubectl-prefix", r"\[(?P<s>pod/[^\]\s]+)\] ", stream_group="s"),
    # docker compose: "vllm03  | "
    Envelope("compose-prefix", r"(?P<s>[A-Za-z0-9][\w.-]*)\s+\| ", stream_group="s"),
    # pdsh / DeepSpeed multi-node launcher: "node-1: ", "ip-10-0-0-5: ", "10.0.0.5: " (a host
    # name ending in "-<digits>" or an address, so "ValueError: ", "python3: " or "collect2: "
    # never match)
    Envelope(
        "pdsh-host",
        r"(?P<s>[A-Za-z][\w-]*-\d+|\d{1,3}(?:\.\d{1,3}){3}): (?=\S| {2}|\[)",
        stream_group="s",
    ),
    # docker --timestamps / kubectl --timestamps: RFC 3339 with nanoseconds; a tab after it in
    # exports that put the time in a column of its own
    Envelope(
        "iso-timestamp",
        r"(?P<t>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)[ \t]",
        time_group="t",
    ),
    # a log exported with the time in a column of its own (CloudWatch, Loki, a spreadsheet):
    # Unix seconds or milliseconds, then a tab: "1714557600123\t"
    Envelope("epoch-tab", r"(?P<t>\d{10}(?:\d{3})?(?:\.\d+)?)\t", time_group="t"),
    # SGLang: "[2025-01-20 13:03:50 TP0] " / "[2025-01-20 13:03:50 DP1 TP3] "
    Envelope(
        "sglang",
        (
            r"\[(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?)"
            r"(?: (?P<s>(?:[A-Z]{2,4}\d+)(?: [A-Z]{2,4}\d+)*))?\] "
        ),
        stream_group="s",
        time_group="t",
    ),
    # "[2026-11-29T03:14:12Z] " / "[2026-11-29 03:14:12.123] "
    Envelope(
        "bracket-timestamp",
        r"\[(?P<t>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\] ",
        time_group="t",
    ),
    # detectron2 / fvcore loggers (month/day time, logger name): on the terminal
    # "[11/23 14:09:17 d2.engine.hooks]: ", warnings and errors led by their level
    # ("WARNING [11/23 14:09:17 d2.checkpoint.c2_model_loading]: "); in its log.txt file
    # "[11/23 14:09:17] d2.engine.hooks INFO: "
    Envelope(
        "detectron2",
        r"(?:(?P<level>WARNING|ERROR) )?\[(?P<t>\d{2}/\d{2} \d{2}:\d{2}:\d{2}) (?P<src>[A-Za-z_][\w.]*)\]: ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    Envelope(
        "detectron2-file",
        r"\[(?P<t>\d{2}/\d{2} \d{2}:\d{2}:\d{2})\] (?P<src>[A-Za-z_][\w.]*) " + _LEVEL + r": ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # vLLM / Ray process tags: "(EngineCore_DP0 pid=245) ", "(VllmWorker rank=1 pid=9) ",
    # "(RayWorkerWrapper pid=77, ip=10.0.0.2) ", "(APIServer pid=1) ", "(pid=77) "
    Envelope(
        "process-tag",
        (
            r"\((?P<s>(?:[A-Za-z_][\w.:-]*(?: rank=\d+| [A-Z]{2,4}\d+)? )?pid=\d+(?:, ip=[\w.:-]+)?"
            r"(?:, [\w ]+=[^)]*)?)\) "
        ),
        stream_group="s",
    ),
    Envelope(
        "ray-daemon",
        r"\((?P<s>raylet|gcs_server|autoscaler|monitor)[^)]*\) ",
        stream_group="s",
    ),
    # torchrun: "[rank3]: " / "[default0]:"
    Envelope("torchrun-rank", r"\[(?P<s>rank\d+)\]: ?", stream_group="s"),
    Envelope("torchrun-default", r"\[(?P<s>default\d+)\]:", stream_group="s"),
    # vLLM logger: "ERROR 01-20 13:03:50 [core.py:700] " and the relative-path form
    # "ERROR 01-20 13:03:50 [v1/executor/multiproc_executor.py:749] "
    Envelope(
        "vllm-logger",
        _LEVEL + r" (?P<t>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) \[(?P<src>[^\]\s]+)\] ?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # older vLLM logger, without the bracket: "ERROR 10-18 16:04:07 multiproc_worker_utils.py:229] "
    Envelope(
        "vllm-logger-old",
        _LEVEL + r" (?P<t>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) (?P<src>[\w./-]+\.py:\d+)\] ?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # glog (c10d, NCCL watchdog): "E0120 13:03:50.123456 1234 ProcessGroupNCCL.cpp:1234] "
    Envelope(
        "glog",
        r"(?P<level>[IWEF])(?P<t>\d{4} \d{2}:\d{2}:\d{2}\.\d+)\s+\d+ (?P<src>[\w./-]+:\d+)\] ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # c10 (PyTorch C++) in brackets: "[E1129 15:53:15.897998298 socket.cpp:1028] ",
    # "[W601 10:00:03.512 ProcessGroupNCCL.cpp:4561] "
    Envelope(
        "c10-bracket",
        (
            r"\[(?P<level>[IWEF])(?P<t>\d{3,4} \d{2}:\d{2}:\d{2}(?:\.\d+)?)(?: \d+)? (?P<src>[\w./-]+:\d+)\] ?"
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # loguru and similar: "2025-06-01 10:00:00.123 | ERROR    | app.server:run:42 - "
    Envelope(
        "pipe-level",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?) \| "
            + _LEVEL
            + r"\s*\| (?P<src>[\w.:<>-]+) - "
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # a level in brackets after a timestamp was peeled: "[ERROR] ", DeepSpeed's "[INFO] "
    Envelope("bracket-level", r"\[" + _LEVEL + r"\]\s+", level_group="level"),
    # DeepSpeed's source after the level: "[partition_parameters.py:347:__exit__] "
    Envelope(
        "bracket-source",
        r"\[(?P<src>[\w./-]+\.py:\d+(?::[\w<>]+)?)\] ",
        source_group="src",
    ),
    # Python logging, "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
    Envelope(
        "python-asctime",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?) - (?P<src>[\w.]+) - "
            + _LEVEL
            + r" - "
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # PyTorch's own log format (torch 2.1-2.2), after its bracketed time:
    # "[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] "
    Envelope(
        "logger-bracket-level",
        r"(?P<src>[A-Za-z_]\w*(?:\.\w+)+): \[" + _LEVEL + r"\] ?",
        level_group="level",
        source_group="src",
    ),
    # Python logging basicConfig: "ERROR:root:", "WARNING:transformers.modeling_utils:"
    Envelope(
        "python-logging",
        _LEVEL + r":(?P<src>[\w.]+):",
        level_group="level",
        source_group="src",
    ),
    # pytest's failure report: the exception and its message on "E   " lines, indented to the
    # failing source line ("E       ValueError: bad shape")
    Envelope("pytest-e", r"E(?: {3,}(?=\S)| +$)"),  # a blank "E" line too
    # uvicorn: "INFO:     127.0.0.1:51234 - ...", "ERROR:    Exception in ASGI application"
    Envelope("uvicorn", _LEVEL + r":\s+", level_group="level"),
    # Generic "2025-01-20 13:03:50,123 INFO ..." / "[2025-01-20 13:03:50] ERROR ..."
    Envelope(
        "timestamp-level",
        (
            r"\[?(?P<t>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\]?\s+\[?"
            + _LEVEL
            + r"\]?:?\s+"
        ),
        level_group="level",
        time_group="t",
    ),
)

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ALNUM = _UPPER + _UPPER.lower() + "0123456789"
# The characters each envelope can start with: a line is only tried against the envelopes its
# next character allows (most traceback and message lines try none).
_FIRST_CHARS = {
    "line-number": " 0123456789",
    "syslog": "ADFJMNOS",
    "mpirun": "[",
    "srun-label": "0123456789",
    "kubectl-prefix": "[",
    "compose-prefix": _ALNUM,
    "pdsh-host": _ALNUM,
    "iso-timestamp": "0123456789",
    "epoch-tab": "0123456789",
    "sglang": "[",
    "bracket-timestamp": "[",
    "detectron2": "[WE",
    "detectron2-file": "[",
    "process-tag": "(",
    "ray-daemon": "(",
    "torchrun-rank": "[",
    "torchrun-default": "[",
    "vllm-logger": "TDINWECF",
    "vllm-logger-old": "TDINWECF",
    "glog": "IWEF",
    "c10-bracket": "[",
    "python-asctime": "0123456789",
    "pipe-level": "0123456789",
    "bracket-level": "[",
    "bracket-source": "[",
    "logger-bracket-level": _UPPER + _UPPER.lower() + "_",
    "python-logging": "TDINWECF",
    "uvicorn": "TDINWECF",
    "pytest-e": "E",
    "timestamp-level": "[0123456789",
}
_BY_FIRST: dict[str, tuple[Envelope, ...]] = {
    ch: tuple(e for e in ENVELOPES if ch in _FIRST_CHARS[e.name])
    for ch in set("".join(_FIRST_CHARS.values()))
}


_STACKED = {"process-tag": 3, "iso-timestamp": 2}
"""Envelopes a line may carry more than once: a Ray worker's prefix around vLLM's own
process tag (``(RayWorkerWrapper pid=9, ip=…) (EngineCore_DP0 pid=245) …``), the container
runtime's timestamp before the program's own (``docker logs --timestamps``); vLLM's API server,
engine core and worker tags in one line (``(APIServer pid=1) (EngineCore_DP0 pid=181)
(Worker_TP1 pid=189) …``)."""


_COMBINE_AFTER = 20_000
"""Lines read one envelope at a time before the combined regexes are compiled: compiling them
costs what combining saves on about this many lines, so a single log (a ``diagnose``) never
pays for it and a batch (``ingest``) soon gains."""
_lines_read = 0
_COMBINED = Combined(_BY_FIRST, _STACKED, _GLOG_LEVELS)


def expect_many() -> None:
    """This process will read many logs (``ingest``): the combined regexes from the first
    line on, instead of after :data:`_COMBINE_AFTER` lines (in each worker of a pool)."""
    global _lines_read
    _lines_read = max(_lines_read, _COMBINE_AFTER)


def warm() -> None:
    """:func:`expect_many`, and every combined regex compiled now: a pool's parent does this
    before it forks, so that its workers do not each compile them."""
    expect_many()
    for ch in _BY_FIRST:
        _COMBINED[ch]  # noqa: B018 (compiled on first access)


def peel(text: str, line: int, untimed: frozenset[str] = frozenset()) -> Record:
    """Peel every envelope at the start of ``text``, in table order, each at most once (a
    process tag at most twice): the envelopes tried one regex at a time (no compile cost up
    front; :meth:`tracelens.read.combined.Combined.peel` can try them as one regex)."""
    return _COMBINED.peel(text, line, combined=False, untimed=untimed)


_CONTAINER_TIME = frozenset({"iso-timestamp"})
"""Envelopes a container runtime stamps on every line (see :func:`~tracelens.read.prefixes.container_stamped`)."""


def line_end(text: str) -> str:
    """The line separator of a log: ``\\n`` (also for ``\\r\\n``), or ``\\r`` for a log whose
    lines are separated by a bare ``\\r`` only (classic Mac OS line ends).

    >>> line_end("a\\r\\nb"), line_end("a\\rb\\r"), line_end("no line end")
    ('\\n', '\\r', '\\n')
    """
    return "\r" if "\r" in text and "\n" not in text else "\n"


def split_lines(
    text: str, first_line: int = 1, end: str | None = None
) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for ``\\n``, ``\\r\\n`` and bare ``\\r`` line ends.

    Segments split by a bare ``\\r`` keep their ``\\n`` line's number, so evidence line numbers
    match ``grep -n`` and editors. In a log with no ``\\n`` at all, ``\\r`` is the line end and
    numbers the lines (``end``: the separator, from :func:`line_end` when not given).

    >>> list(split_lines("a\\r\\nb\\rc\\nd"))
    [(1, 'a'), (2, 'b'), (2, 'c'), (3, 'd')]
    >>> list(split_lines("a\\rb\\rc\\r"))
    [(1, 'a'), (2, 'b'), (3, 'c')]
    """
    sep = end or line_end(text)
    lines = text.split(sep)
    if lines and lines[-1] == "":
        lines.pop()
    if sep == "\r":
        for i, raw in enumerate(lines):
            yield first_line + i, raw
        return
    for i, raw in enumerate(lines):
        n = first_line + i
        if "\r" in raw:
            if raw.endswith("\r"):
                raw = raw[:-1]
            parts = raw.split("\r")
            for part in parts:
                if part or len(parts) == 1:
                    yield n, part
        else:
            yield n, raw


def line_count(text: str) -> int:
    """Lines in a decoded log, as :func:`split_lines` numbers them.

    >>> line_count("a\\nb"), line_count("a\\rb\\r"), line_count("")
    (2, 2, 0)
    """
    sep = line_end(text)
    return text.count(sep) + (0 if text.endswith(sep) or not text else 1)


def decode(data: bytes, encoding: str = "utf-8") -> str:
    """Decode without failing: invalid sequences become U+FFFD, NUL bytes vanish."""
    text = data.decode(encoding, errors="replace")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text


_ESCAPED_ANSI = re.compile(r"#033\[[0-?]*[ -/]*[@-~]")
"""A colour sequence as syslog daemons store it, the escape character written ``#033``."""


_BLANKS = (" ", "\t")


def _jsonlines():
    """:mod:`tracelens.read.jsonlines`, imported for a log that starts with an object only."""
    from tracelens.read import jsonlines

    return jsonlines


def records_from_text(text: str, first_line: int = 1, end: str | None = None) -> list[Record]:
    """Turn decoded text into records (envelopes peeled, control sequences removed); ``end``:
    the line separator, as for :func:`split_lines`. A line no envelope matches that starts
    with one of the log's host labels (:func:`prefixes.host_labels`) has it peeled as its
    stream, and prefixes the log shows to be wrappers (:mod:`tracelens.read.prefixes`) are
    peeled too. A log of JSON lines (:mod:`tracelens.read.jsonlines`) is read from the text
    its objects hold, a log pasted in a Markdown quote or an indented code block is taken out
    of it (:mod:`tracelens.read.quoted`), and lines a console cut at its width are joined
    again (:mod:`tracelens.read.rewrap`)."""
    global _lines_read
    if "#033[" in text:  # rsyslog/journald wrote the escape character as "#033"
        text = _ESCAPED_ANSI.sub("", text)
    lines = list(split_lines(text, first_line, end))
    if "section_" in text:
        lines = [(n, raw) for n, raw in lines if _GITLAB_SECTION.fullmatch(raw) is None]
    head = text[:256].lstrip()[:1]
    if head == ">" or text[:256].lstrip("\r\n")[:1] in _BLANKS:
        from tracelens.read import quoted  # only for a log that starts quoted or indented

        lines = quoted.dedent(quoted.unquote(lines))
        text = "\n".join(raw for _, raw in lines)
        head = text[:256].lstrip()[:1]
    if head in ("{", "[") and (unpacked := _jsonlines().unpack(lines, text)) is not None:
        lines = unpacked
        text = "\n".join(raw for _, raw in lines)
    lines = rewrap.join_cut_lines(lines)
    one = _COMBINED.peel if _lines_read >= _COMBINE_AFTER else peel
    _lines_read += len(lines)
    if prefixes.CONTAINER_STAMP.match(text) is not None and prefixes.container_stamped(lines):
        one = partial(one, untimed=_CONTAINER_TIME)
    if _HAS_CTRL_IN_LINE.search(text) is not None:  # most logs have nothing to clean
        lines = [(n, clean(raw)) for n, raw in lines]
    labels = prefixes.host_labels(text)
    if labels is None:
        records = [one(raw, n) for n, raw in lines]
    else:
        records = [prefixes.labelled(one, labels, raw, n) for n, raw in lines]
    if prefixes.may_be_wrapped(text):
        return prefixes.unwrap(records, one)
    pre = prefixes.constant_prefix([(r.line, r.text) for r in records[:64]], one)  # enveloped
    return prefixes.unwrap(records, one, pre) if pre else records


def records_from_bytes(data: bytes, first_line: int = 1, end: str | None = None) -> list[Record]:
    """Decode bytes (BOM-aware) and turn them into records."""
    encoding, bom = sniff_encoding(data[:4])
    return records_from_text(decode(data[bom:], encoding), first_line, end)
