"""sqlite-utils without pandas and numpy.

sqlite-utils imports pandas and numpy whenever they are installed, to store their types; the
``ray`` extra installs both, and importing them took longer than the rest of a command that
opens the incident store (4 s of a 5 s import on a loaded 2-core machine, 0.9 s without). The
store holds no pandas or numpy values, so they are hidden while sqlite-utils is imported (and
importable again right after, for whatever else needs them).
"""

from __future__ import annotations

import sys

_HIDDEN = [name for name in ("pandas", "numpy") if name not in sys.modules]
for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]  # an import of it fails at once
try:
    import sqlite_utils
finally:
    for _name in _HIDDEN:
        if sys.modules.get(_name, False) is None:
            del sys.modules[_name]

__all__ = ["sqlite_utils"]
