"""RE2 regexes, compiled once: linear time, so no log line and no rule can make a run hang."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

_RE2_OPTS = re2.Options()
_RE2_OPTS.log_errors = False

_Base: Any = getattr(re2, "_Regexp", None)
_UNANCHORED: Any = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_NO_SPAN = (-1, -1)


def _matches(program: Any, data: bytes) -> bool:
    """Whether the binding's compiled RE2 program matches somewhere in ``data``."""
    return bool(program.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_SPAN)


def found(rx: Any, text: str) -> bool:
    """``rx.search(text) is not None``, asked of the compiled program where this RE2 binding
    allows it: a hit needs no match object (see :class:`_Regex` for a miss). Text RE2 cannot
    read as it is (lone surrogates), another binding or another regex: ``rx.search``."""
    program = getattr(rx, "_regexp", None)
    if program is not None and _UNANCHORED is not None:
        try:
            return _matches(program, text.encode("utf-8"))
        except UnicodeEncodeError:
            pass
    return rx.search(text) is not None


if _Base is not None and _UNANCHORED is not None:

    class _Regex(_Base):
        """RE2's compiled regex whose ``search`` answers a miss from the compiled program
        itself: the binding's ``search`` builds a generator, converts offsets and makes a match
        object (about 3.5 against 1.5 microseconds a miss here), and most searches of a log's
        lines and fields miss. A hit, and any search from an offset, goes the binding's way."""

        __slots__ = ()

        def search(self, text: Any, pos: Any = None, endpos: Any = None) -> Any:
            if pos is None and endpos is None:
                if isinstance(text, str):
                    try:
                        data = text.encode("utf-8")
                    except UnicodeEncodeError:  # the binding raises it as it always did
                        return super().search(text)
                elif isinstance(text, bytes):
                    data = text
                else:
                    return super().search(text)
                if not _matches(self._regexp, data):
                    return None
            return super().search(text, pos, endpos)

    def _compile(pattern: str | bytes) -> Any:
        return _Regex(pattern, _RE2_OPTS)

else:  # another RE2 binding

    def _compile(pattern: str | bytes) -> Any:
        return re2.compile(pattern, _RE2_OPTS)


@lru_cache(maxsize=4096)
def compile_regex(pattern: str | bytes, *, multiline: bool = False) -> Any:
    """Compile an RE2 regex (a bytes pattern searches UTF-8 bytes); raises ValueError with
    RE2's reason."""
    flag = "(?m)" if multiline else ""
    try:
        if isinstance(pattern, bytes):
            return _compile(flag.encode() + pattern)
        return _compile(flag + pattern)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(f"invalid RE2 regex {pattern!r}: {reason}") from None
