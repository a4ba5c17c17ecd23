"""What the terminal app remembers between runs (the theme), in a small JSON file under the
user's config dir (``$XDG_CONFIG_HOME/tracelens/tui.json``). A file that cannot be read or does
not hold what is expected is ignored (and replaced on the next change), never an error.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "tui.json"
>>> save_settings(path, {"theme": "nord"})
>>> load_settings(path)
({'theme': 'nord'}, None)
>>> _ = path.write_text("{not json")
>>> load_settings(path)[0]
{}
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tracelens.paths import config_home

KNOWN = {"theme": str}
"""The settings kept, and their types; anything else in the file is dropped."""


def default_settings_path() -> Path:
    return config_home() / "tracelens" / "tui.json"


def load_settings(path: Path) -> tuple[dict, str | None]:
    """The settings in ``path`` (``{}`` where there are none) and, where the file exists but
    could not be used, one line saying why."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path}: ignored ({getattr(exc, 'strerror', None) or 'not JSON'})"
    if not isinstance(data, dict):
        return {}, f"{path}: ignored (not a JSON object)"
    return {k: v for k, v in data.items() if isinstance(v, KNOWN.get(k, ()))}, None


def save_settings(path: Path, settings: dict) -> None:
    """Write ``settings`` to ``path`` (its folder created), replacing the file at once so a
    crash never leaves half a file. Raises :class:`OSError` where it cannot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
