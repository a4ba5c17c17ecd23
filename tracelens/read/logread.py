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
from collections.abc import Iterator
from functools import partial

from tracelens.models import Record
from tracelens.pyregex import compile_re
from tracelens.read import prefixes, rewrap
from tracelens.read.combined import Combined
from tracelens.read.envelopes import ENVELOPES, FIRST_CHARS, GLOG_LEVELS, Envelope

# CSI (colours, cursor moves), OSC (titles, hyperlinks), other two-byte escapes, then any C0
# control left over except tab.
_ANSI = compile_re(
    # CSI; OSC, DCS, SOS, PM and APC strings (Buildkite stamps lines with "\x1b_bk;t=...\x07");
    # two-character escapes; other control characters
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]P^X_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f]"
)
_GITLAB_SECTION = compile_re(r"(?:\x1b\[0K)?section_(?:start|end):\d+:[\w.-]+(?:\[[^\]]*\])?")
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


_HAS_CTRL = compile_re(r"[\x00-\x08\x0b-\x1f\x7f]")
_HAS_CTRL_IN_LINE = compile_re(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""What :func:`clean` removes, less the line ends (a line split off a text holds none)."""


_BY_FIRST: dict[str, tuple[Envelope, ...]] = {
    ch: tuple(e for e in ENVELOPES if ch in FIRST_CHARS[e.name])
    for ch in set("".join(FIRST_CHARS.values()))
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
_COMBINED = Combined(_BY_FIRST, _STACKED, GLOG_LEVELS)


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
    >>> list(split_lines("x\\n^C^CTraceback (most recent call last):\\n^C\\n^CCUDA error"))
    [(1, 'x'), (2, '^C^C'), (2, 'Traceback (most recent call last):'), (3, '^C'), (4, '^C'), (4, 'CUDA error')]
    """
    sep = end or line_end(text)
    lines = text.split(sep)
    if lines and lines[-1] == "":
        lines.pop()
    if sep == "\r":
        for i, raw in enumerate(lines):
            yield first_line + i, raw
        return
    interrupted = "^C" in text
    for i, raw in enumerate(lines):
        n = first_line + i
        if interrupted and raw.startswith("^C"):
            k = 2
            while raw.startswith("^C", k):
                k += 2
            if k < len(raw):  # the terminal's echo of a Ctrl-C, glued to the next line printed
                yield n, raw[:k]
                raw = raw[k:]
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


_ESCAPED_ANSI = compile_re(r"#033\[[0-?]*[ -/]*[@-~]")
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
    lines = prefixes.time_ordered(list(split_lines(text, first_line, end)))
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
