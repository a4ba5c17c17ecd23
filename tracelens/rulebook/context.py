"""The document, indexed once for the conditions of every rule."""

from __future__ import annotations

import bisect
from itertools import accumulate
from typing import Any

import re2

from tracelens.models import Document
from tracelens.parse.document import iter_exceptions, iter_frames
from tracelens.parse.usercontent import may_quote_user_content, without_user_content

try:
    _UNANCHORED: Any = re2._Anchor.UNANCHORED
except AttributeError:  # another RE2 binding: every search goes through ``rx.search``
    _UNANCHORED = None
_NO_SPAN = (-1, -1)


def _answer(rx: Any, text: str) -> bool | None:
    """Whether RE2 regex ``rx`` matches somewhere in ``text``, asked of the compiled regex
    directly; ``None`` when it cannot be asked so (not this RE2 binding, text RE2 cannot
    read): a hit needs no match object (see :class:`tracelens.regex._Regex` for a miss)."""
    raw = getattr(rx, "_regexp", None)
    if raw is None or _UNANCHORED is None:
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return raw.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_SPAN


def found(rx: Any, text: str) -> bool:
    """``rx.search(text) is not None``."""
    got = _answer(rx, text)
    return rx.search(text) is not None if got is None else got


class Context:
    """What conditions look at, computed once per document."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.exceptions = list(iter_exceptions(doc))
        self.frames = list(iter_frames(doc))
        self.facts = doc.fact_map()
        self._searched: dict[tuple[Any, str], Any] = {}
        parts = [rec.text for rec in doc.records]
        text = "\n".join(parts)
        if may_quote_user_content(text):  # request logging: mask what users typed, line by line
            parts = [without_user_content(part) for part in parts]
            text = "\n".join(parts)
        self.text = text
        self.offsets: list[int] = list(accumulate((len(p) + 1 for p in parts), initial=0))[:-1]
        # Line conditions search the UTF-8 bytes once encoded: RE2 reports byte offsets there.
        self.btext = self.text.encode("utf-8", "surrogatepass")
        if len(self.btext) == len(self.text):
            self.boffsets = self.offsets
        else:
            self.boffsets = []
            bpos = 0
            for part in parts:
                self.boffsets.append(bpos)
                bpos += len(part.encode("utf-8", "surrogatepass")) + 1

    def search(self, rx: Any, text: str) -> Any:
        """``rx.search(text)``, remembered for this document: the rules test the same few
        exception types and frame paths (every rank prints the same traceback) again and
        again."""
        key = (rx, text)
        try:
            return self._searched[key]
        except KeyError:
            m = self._searched[key] = rx.search(text)
            return m

    def record_at(self, offset: int):
        """The record holding a byte offset of :attr:`btext`."""
        k = bisect.bisect_right(self.boffsets, offset) - 1
        return self.doc.records[max(k, 0)]
