"""The document, indexed once for the conditions of every rule."""

from __future__ import annotations

import bisect
from itertools import accumulate
from typing import Any

from tracelens.models import Document
from tracelens.parse.document import iter_exceptions, iter_frames
from tracelens.parse.usercontent import may_quote_user_content, without_user_content


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
