"""Where tracelens keeps things (XDG): importing this costs nothing."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
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


def store_file(path: Path | str | None) -> Path:
    """The file an incident store given as ``path`` opens (``None``: :func:`default_db`)."""
    return Path(path) if path is not None else default_db()


CACHE_KEEP = 16
"""Cache files of one kind kept in the cache folder: each set of rules folders, each edit of
the rules and each release writes a new one, and the older ones would pile up."""


def prune_cache(path: Path, keep: int = CACHE_KEEP, spare: Collection[Path] = ()) -> None:
    """Remove all but the ``keep`` most recently written cache files of ``path``'s kind (same
    name up to its first ``-``, same suffix) from its folder, never one of ``spare``; one that cannot
    be removed stays."""
    prefix, suffix = path.name.split("-", 1)[0] + "-", path.suffix
    spared = {p.name for p in spare}
    try:
        with os.scandir(path.parent) as it:
            found = [
                (e.stat().st_mtime_ns, e.path)
                for e in it
                if e.name.startswith(prefix)
                and e.name.endswith(suffix)
                and e.is_file()
                and e.name not in spared
            ]
    except OSError:
        return
    found.sort(reverse=True)
    for _mtime, old in found[keep:]:
        try:
            os.unlink(old)
        except OSError:
            pass


def write_cache(path: Path, parts: Iterable[bytes], spare: Collection[Path] = ()) -> None:
    """Write a cache file atomically (a temporary file, then a rename) and prune the older files
    of its kind but those of ``spare`` (files others are built from); a cache that cannot be written is
    simply not kept (a read-only home: the work is done again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.writelines(parts)
        os.replace(tmp, path)
        prune_cache(path, spare=spare)
    except OSError:
        pass
