"""Tracebacks that several processes print at the same moment without a prefix (ranks of one
job sharing a terminal) arrive interleaved line by line: every line N times in a row. The lexer
reads such a run as one traceback (:func:`unpaired`)."""

from __future__ import annotations

from collections.abc import Sequence

from tracelens.models import Record
from tracelens.parse.marks import TB_HEAD


def unpaired(records: Sequence[Record], openers: list[int]) -> Sequence[Record] | None:
    """The records with line-by-line interleaved copies of one traceback taken as one: N
    processes (ranks without a prefix) that print the same traceback at the same time write
    each of its lines N times in a row, from the header on. Each such run of identical groups
    keeps the first line of every group (its line number); ``None`` when the log has no run (a
    header repeated alone, or a single header, is no run: nothing is dropped).

    >>> from tracelens.read.logread import records_from_text
    >>> recs = records_from_text('''Traceback (most recent call last):
    ... Traceback (most recent call last):
    ...   File "/srv/a.py", line 3, in <module>
    ...   File "/srv/a.py", line 3, in <module>
    ... OSError: disk full
    ... OSError: disk full
    ... more of the message
    ... more of the message''')
    >>> [(r.line, r.text) for r in unpaired(recs, [0, 1])][1:]
    [(3, '  File "/srv/a.py", line 3, in <module>'), (5, 'OSError: disk full'), (7, 'more of the message')]
    """
    n = len(records)
    keep: list[Record] | None = None
    done = 0  # records before this index are already in keep

    def same(a: Record, b: Record) -> bool:
        return a.text == b.text and a.level == b.level and a.source == b.source

    seen = 0  # openers before this index were counted in a block of repeated headers
    for k in openers:
        if k < max(done, seen) or k + 3 >= n or records[k].text.strip() != TB_HEAD:
            continue
        copies = 1
        while k + copies < n and same(records[k], records[k + copies]):
            copies += 1
        seen = k + copies  # each header of a repeated block is counted once (linear time)
        if copies == 1:
            continue
        j = k + copies
        while j + copies <= n and records[j].text.strip():
            if not all(same(records[j], records[j + c]) for c in range(1, copies)):
                break
            j += copies
        if j - k < 2 * copies:  # the header and at least one more line, each in every copy
            continue
        if keep is None:
            keep = []
        keep.extend(records[done:k])
        keep.extend(records[k:j:copies])
        done = j
    if keep is None:
        return None
    keep.extend(records[done:])
    return keep
