"""Where tracelens keeps things (XDG): importing this costs nothing."""

from __future__ import annotations

import os
from pathlib import Path


def data_home() -> Path:
    return Path(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    )


def config_home() -> Path:
    return Path(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    )


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))


def default_db() -> Path:
    """``TRACELENS_DB``, else ``$XDG_DATA_HOME/tracelens/incidents.db``."""
    env = os.environ.get("TRACELENS_DB")
    return Path(env) if env else data_home() / "tracelens" / "incidents.db"
