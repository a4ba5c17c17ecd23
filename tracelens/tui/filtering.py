"""The filter behind the TUI's search boxes: every word of the query must match a word of the
row, as the CLI's ``--search`` does (its full-text index splits text into runs of letters and
digits, the same way :func:`words` does). A query word matches a row word that it begins (so
the list narrows as you type) or, from five letters on, one that it spells with a typo.

>>> idx = WordIndex(["FP8 KV cache on this GPU", "fp8 weights need sm_89", "out of memory"])
>>> idx.search("fp8 kv")
[0]
>>> idx.search("memroy")
[2]
>>> idx.search("")
[0, 1, 2]
"""

from __future__ import annotations

from bisect import bisect_left

from rapidfuzz import fuzz, process

from tracelens.pyregex import compile_re

WORD = compile_re(r"[^\W_]+")
"""A word: a run of letters and digits (``/dev/shm`` is ``dev`` and ``shm``, ``kv_cache`` is
``kv`` and ``cache``), as in SQLite's default full-text tokenizer."""
TYPO_FROM = 5
"""Query words this long or longer also match words they spell with one or two typos."""
TYPO_SCORE = 80
"""The similarity (rapidfuzz ratio, 0-100) a misspelt word needs."""


def words(text: str) -> list[str]:
    """The words of ``text``, lowercased."""
    return WORD.findall(text.lower())


class WordIndex:
    """Rows (one text each) indexed by their words, for a filter that runs on every keystroke
    over many thousand rows: each query word is looked up in the vocabulary, not in the rows."""

    def __init__(self, texts: list[str]) -> None:
        self.size = len(texts)
        self.rows_of: dict[str, set[int]] = {}
        for k, text in enumerate(texts):
            for w in set(words(text)):
                self.rows_of.setdefault(w, set()).add(k)
        self.vocabulary = sorted(self.rows_of)

    def _rows_matching(self, word: str) -> set[int]:
        out: set[int] = set()
        vocab = self.vocabulary
        k = bisect_left(vocab, word)
        while k < len(vocab) and vocab[k].startswith(word):  # the words it begins, in a row
            out |= self.rows_of[vocab[k]]
            k += 1
        if len(word) >= TYPO_FROM:
            for w, _score, _k in process.extract_iter(
                word, self.vocabulary, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE
            ):
                out |= self.rows_of[w]
        return out

    def search(self, query: str) -> list[int]:
        """Indexes (in row order) of the rows that hold every word of ``query``."""
        hits: set[int] | None = None
        for word in dict.fromkeys(words(query)):
            found = self._rows_matching(word)
            hits = found if hits is None else hits & found
            if not hits:
                return []
        return list(range(self.size)) if hits is None else sorted(hits)
