"""``{fact}`` placeholders in a rule's prose and commands, filled from the log."""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.]*)(?:\|([^{}]*))?\}")


def fill(template: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` placeholders; an unknown one becomes its fallback (``{name|fallback}``)
    or ``<name>``.

    >>> fill("cp {model_path}/a{,.bak} {x} on {gpu|this GPU}", {"model_path": "/m"})
    'cp /m/a{,.bak} <x> on this GPU'
    """

    def one(m: re.Match[str]) -> str:
        if m.group(1) in values:
            return values[m.group(1)]
        return m.group(2) if m.group(2) is not None else f"<{m.group(1)}>"

    return _PLACEHOLDER.sub(one, template)
