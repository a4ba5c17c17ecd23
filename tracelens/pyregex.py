"""Python regexes, their compiled programs kept between runs.

tracelens compiles about 150 of Python's own regexes as its modules load (the envelopes a log
line may wear, the traceback lexer, the failure lines ...): 20-25 ms of a ~130 ms
``diagnose``, spent in ``re``'s parser and code generator, which are pure Python. What they
produce for a pattern, the program ``_sre.compile`` takes, depends only on the pattern, its
flags and the Python that made it; :func:`compile_re` keeps those programs in one file of the
cache folder (``marshal``, keyed by the interpreter's version and ``_sre``'s magic number), so a
later run builds each ``re.Pattern`` straight from its program. The pattern is the same object
``re.compile`` gives (same type, same behaviour, same pickling). It is for tracelens's own
patterns: one built from a log's text is compiled by ``re.compile``, so that the file holds only
what every run compiles.

Where the interpreter lacks these internals (another implementation, a future ``re``), or a
cached program is refused (``_sre`` checks every program it is given), the pattern is compiled
by ``re.compile``. The command-line entry writes the programs a run compiled
(:func:`save`) before it exits.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Any

try:  # CPython's regex internals (Python 3.11 on)
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]

    _USABLE = all(hasattr(m, n) for m, n in ((_compiler, "_code"), (_parser, "parse")))
except ImportError:  # pragma: no cover (another implementation)
    _USABLE = False

_Key = tuple[str, int]
_Program = tuple[int, list[int], int, dict[str, int], tuple[Any, ...]]
"""(flags, code, groups - 1, groupindex, indexgroup): the arguments of ``_sre.compile`` after
the pattern."""

_LIMIT = 4096
"""Programs the cache file keeps at most (patterns built from a log's own text are
compiled once per run and not kept)."""

_loaded: dict[_Key, _Program] | None = None
_new: dict[_Key, _Program] = {}
_patterns: dict[_Key, re.Pattern[str]] = {}


def compile_re(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)`` for a ``str`` pattern, built from its program when an
    earlier run compiled it; the same pattern again in this process is the same object."""
    key = (source, int(flags))
    got = _patterns.get(key)
    if got is not None:
        return got
    pattern = _build(key) if _USABLE else re.compile(source, flags)
    if len(_patterns) >= _LIMIT:
        _patterns.clear()
    _patterns[key] = pattern
    return pattern


def _build(key: _Key) -> re.Pattern[str]:
    source, flags = key
    program = _programs().get(key)
    if program is not None:
        try:
            return _sre.compile(source, *program)
        except Exception:  # noqa: BLE001  (a program _sre refuses: compiled below instead)
            pass
    try:
        parsed = _parser.parse(source, flags)
        code = _compiler._code(parsed, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, k in groupindex.items():
            indexgroup[k] = name
        program = (  # plain ints: marshal refuses int subclasses (re's named opcodes, flags)
            int(flags | parsed.state.flags),
            [int(c) for c in code],
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        pattern = _sre.compile(source, *program)
    except Exception:  # noqa: BLE001  (re.compile raises the error a bad pattern deserves)
        return re.compile(source, flags)
    _new[key] = program
    return pattern


def _path() -> Any:
    from tracelens.paths import cache_home

    version = "-".join(map(str, sys.version_info[:3]))
    tag = f"{sys.implementation.cache_tag}-{version}-{getattr(_sre, 'MAGIC', 0)}"
    return cache_home() / "tracelens" / f"regex-programs-{tag}.marshal"


def _programs() -> dict[_Key, _Program]:
    global _loaded
    if _loaded is None:
        import marshal

        try:
            data = marshal.loads(_path().read_bytes())
            _loaded = data if isinstance(data, dict) else {}
        except (OSError, EOFError, ValueError, TypeError):
            _loaded = {}
    return _loaded


def save() -> None:
    """Write the programs this process compiled to the cache file, with those it holds
    already (never raises: a cache folder that cannot be written only means compiling again
    next time)."""
    if not _new or not _USABLE:
        return
    import marshal

    programs = dict(_programs())
    if len(programs) + len(_new) > _LIMIT:
        programs = {k: v for k, v in programs.items() if k in _patterns}
    programs.update(_new)
    path = _path()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(marshal.dumps(programs))
        os.replace(tmp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return
    _programs().update(_new)
    _new.clear()
