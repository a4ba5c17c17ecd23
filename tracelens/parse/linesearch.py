"""Which records a regex finds, with one linear-time pass over the whole log instead of one
regex search a line.

A Python regex searched line by line costs a call and a scan per line; RE2 scans the log's
lines joined by newlines once, at memory speed. RE2's ``\\b``, ``\\d``, ``\\s`` are ASCII where
Python's are Unicode, so RE2 only proposes candidate lines (the caller's RE2 pattern must match
wherever the Python one matches a line) and each candidate is checked with the Python regex:
the answer is the same as line by line.

>>> import re
>>> from tracelens.models import Record
>>> from tracelens.regex import compile_regex
>>> recs = [Record(line=n, text=t) for n, t in enumerate(["a", "vLLM API server version 1", "b"], 1)]
>>> rx = re.compile(r"\\bvLLM API server version\\b")
>>> records_matching(recs, rx, compile_regex(rx.pattern.encode(), multiline=True))
[1]
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any, Protocol

from tracelens.models import Record


class Searcher(Protocol):
    """A regex, or anything with its ``search``."""

    def search(self, text: str, /) -> Any: ...


def records_matching(records: list[Record], rx: Searcher, candidates: Any) -> list[int]:
    """Indices of the records whose text ``rx`` finds (``rx.search``), in order.

    ``candidates``: an RE2 bytes regex, multi-line, that matches the UTF-8 of the records'
    texts joined by newlines somewhere in every record ``rx`` finds (``rx``'s own pattern when
    it has no Unicode classes that RE2 reads as ASCII: ``\\d``, ``\\s``, ``\\w``)."""
    if not records:
        return []
    texts = [rec.text for rec in records]
    joined = "\n".join(texts)
    data = joined.encode("utf-8", "surrogatepass")
    if len(data) == len(joined):
        sizes = [len(t) for t in texts]
    else:
        sizes = [len(t.encode("utf-8", "surrogatepass")) for t in texts]
    starts = list(accumulate((n + 1 for n in sizes), initial=0))
    out: list[int] = []
    pos = 0
    while pos <= len(data):
        m = candidates.search(data, pos)
        if m is None:
            break
        k = bisect_right(starts, m.start()) - 1
        if rx.search(texts[k]) is not None:
            out.append(k)
        pos = starts[k + 1]  # the next record: each is checked once, whatever matched across
    return out
