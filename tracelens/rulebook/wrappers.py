"""What only reports another failure: the symptom rules' ``reports`` regexes, asked of an
exception or a line (:mod:`tracelens.rulebook.origin` leaves such failures out when it looks
for the one that started it all)."""

from __future__ import annotations

from tracelens.models import Document, ExceptionInfo
from tracelens.regex import compile_regex, found
from tracelens.rulebook.required import reused_literal


class Wrappers:
    """What only reports another failure: the symptom rules' ``reports`` regexes."""

    def __init__(self, pairs: list[tuple[str | None, str | None]]):
        # the regexes as text, compiled (compile_regex: once, then a cache lookup) when first
        # searched: a message regex only for an exception whose type matched
        self.pairs = [(t or None, m or None) for t, m in pairs]
        # the literal each match holds (see tracelens.rulebook.required): a cheap "no" first
        self._literals = [
            (reused_literal(t) if t else None, reused_literal(m) if m else None) for t, m in pairs
        ]

    def exception(self, exc: ExceptionInfo) -> bool:
        msg = exc.message[:2000]
        for (trx, mrx), (tlit, mlit) in zip(self.pairs, self._literals):
            if trx is not None and (
                (tlit is not None and tlit not in exc.type)
                or not found(compile_regex(trx), exc.type)
            ):
                continue
            if mrx is not None and (
                (mlit is not None and mlit not in msg) or not found(compile_regex(mrx), msg)
            ):
                continue
            return True
        return False

    def line(self, text: str) -> bool:
        return any(
            mrx is not None
            and trx is None
            and (mlit is None or mlit in text)
            and found(compile_regex(mrx), text)
            for (trx, mrx), (_tlit, mlit) in zip(self.pairs, self._literals)
        )

    def last_symptom(self, doc: Document, after: int = 0) -> int:
        """The last line of a traceback or an error line after line ``after`` that only
        reports another failure (0 when there is none)."""
        ends = [
            tb.end_line
            for tb in doc.tracebacks
            if tb.end_line > after and tb.exception is not None and self.exception(tb.exception)
        ]
        ends += [e.line for e in doc.errors if e.line > after and self.line(e.text)]
        return max(ends, default=0)
