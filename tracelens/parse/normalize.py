"""Messages with what varies between runs replaced (numbers, hex, paths, sizes, ids,
timestamps), so the same failure reads the same across runs, machines and versions.

>>> normalize("Tried to allocate 2.00 GiB on GPU 3 (pid 4155) at 0x7f3a2b7fe640 in /models/x/y.bin")
'Tried to allocate <size> on GPU <n> (pid <n>) at <hex> in <path>'
"""

from __future__ import annotations

import re
from functools import cache

from tracelens.pyregex import compile_re


@cache
def _normalizers() -> tuple[tuple[re.Pattern[str], str], ...]:
    """What varies and what it becomes, compiled on first use (a log with one traceback and no
    store never normalizes a message)."""
    return (
        (
            compile_re(
                r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
            ),
            "<uuid>",
        ),
        (compile_re(r"\b(?:chatcmpl|cmpl|req|request|run|job)[-_][\w-]{4,}"), "<id>"),
        (
            compile_re(
                r"\d{4}-\d{2}-\d{2}[T _]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
            ),
            "<ts>",
        ),
        (compile_re(r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<ts>"),
        (compile_re(r"0x[0-9a-fA-F]+"), "<hex>"),
        (compile_re(r"(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]+){2,}[\\/]?"), "<path>"),
        (compile_re(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes?)\b"), "<size>"),
        (compile_re(r"\b[0-9a-f]{12,}\b"), "<hex>"),
        (compile_re(r"\d+(?:\.\d+)*"), "<n>"),
    )


def normalize(text: str) -> str:
    for pattern, repl in _normalizers():
        text = pattern.sub(repl, text)
    return " ".join(text.split())
