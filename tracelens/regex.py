"""RE2 regexes, compiled once: linear time, so no log line and no rule can make a run hang."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

_RE2_OPTS = re2.Options()
_RE2_OPTS.log_errors = False


@lru_cache(maxsize=4096)
def compile_regex(pattern: str | bytes, *, multiline: bool = False) -> Any:
    """Compile an RE2 regex (a bytes pattern searches UTF-8 bytes); raises ValueError with
    RE2's reason."""
    flag = "(?m)" if multiline else ""
    try:
        if isinstance(pattern, bytes):
            return re2.compile(flag.encode() + pattern, _RE2_OPTS)
        return re2.compile(flag + pattern, _RE2_OPTS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(f"invalid RE2 regex {pattern!r}: {reason}") from None
