"""``{fact}`` placeholders in a rule's prose and commands, filled from the log."""

from __future__ import annotations

from tracelens.pyregex import compile_re

_PLACEHOLDER = compile_re(r"\{([A-Za-z_][\w.]*)(?:\|((?:[^{}]|\{[^{}]*\})*))?\}")
"""A placeholder, its fallback holding at most one level of placeholders: the names a rule's
texts use (:func:`fill` reads any depth)."""
_NAME = compile_re(r"[A-Za-z_][\w.]*")
_OPEN = compile_re(r"\{")
_BRACES = compile_re(r"[{}]")
NAMES = compile_re(r"\{([A-Za-z_][\w.]*)[|}]")
"""The name of every placeholder, those inside fallbacks too."""


def fill(template: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` placeholders; an unknown one becomes its fallback (``{name|fallback}``,
    which may hold placeholders of its own: ``{signal|{fatal|a crash}}``) or ``<name>``. A
    value is put in as it is: braces the log's text holds are never read as placeholders.

    >>> fill("cp {model_path}/a{,.bak} {x} on {gpu|this GPU}", {"model_path": "/m"})
    'cp /m/a{,.bak} <x> on this GPU'
    >>> fill("died of {signal|{fatal|a crash}}", {"fatal": "{Aborted}"})
    'died of {Aborted}'
    """
    if "{" not in template:
        return template
    return _fill(template, 0, values, nested=False)[0]


def _fill(t: str, i: int, values: dict[str, str], nested: bool) -> tuple[str, int]:
    """The text from ``i`` filled, and where it stopped: at the end, or (``nested``, in a
    fallback) at the ``}`` that closes it. Text between braces is copied in one piece."""
    out: list[str] = []
    n = len(t)
    special = _BRACES if nested else _OPEN
    while (b := special.search(t, i)) is not None:
        k = b.start()
        out.append(t[i:k])
        if t[k] == "}":  # nested only: the fallback's end
            return "".join(out), k
        if (m := _NAME.match(t, k + 1)) is not None and m.end() < n:
            name, j = m.group(0), m.end()
            if t[j] == "}":
                out.append(values[name] if name in values else f"<{name}>")
                i = j + 1
                continue
            if t[j] == "|":
                fallback, e = _fill(t, j + 1, values, nested=True)
                if e < n:  # closed: a fallback left open is literal text
                    out.append(values[name] if name in values else fallback)
                    i = e + 1
                    continue
        out.append("{")
        i = k + 1
    out.append(t[i:])
    return "".join(out), n
