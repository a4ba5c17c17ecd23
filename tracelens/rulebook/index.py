"""The compiled rule index: what a run needs of every rule, in one file per set of rules
folders, checked against those folders with one stat per folder.

The file holds, after a fixed header: the run part (pickled: the folders' stamps, each rule's
id, file and file stamp, its example logs, the wrappers, the errors, the prefilter with its
automaton), the catalog (pickled, read only to rebuild: each rule file's stamp, checksum and
what it held) and each rule's pickled model, read and unpickled only when the rule is used.

When it is current (the trade-off): a run stats every folder of the rules trees, each
``categories.yaml`` and each rule file that did not load (so that its fix is seen however it was
written), not each rule file. A folder's mtime changes when a file in it is added,
deleted or renamed, which covers editors that save by writing a new file and renaming it over
the old one (vim, emacs, JetBrains IDEs, ``sed -i``) and ``git checkout``. An edit written in
place (VS Code, nano, ``>``) leaves the folder alone: the rules the prefilter picks are stat'ed
before they are used (a few stats a run) and the index is rebuilt when one changed, so an edited
rule that fires is always the current one. What a run does not see is an in-place edit of the
``needs`` of a rule whose old literals are not in the log; the rule commands (``rules lint``,
``rules test``) stat every file, as does any run after a change in the folder. A folder or file
changed within :data:`RACY_NS` of a build is stored as unknown, so an edit within the same
timestamp tick is seen too.
"""

from __future__ import annotations

import mmap
import os
import pickle
import struct
import time
import zlib
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tracelens.paths import write_cache
from tracelens.rulebook import required
from tracelens.rulebook.model import Rule, RuleError, rule_regexes
from tracelens.rulebook.prefilter import Prefilter
from tracelens.rulebook.rulefile import load_rule_file, shipped_rules_dir

FORMAT = 3
_MAGIC = b"TLRULES1"
_HEAD = struct.Struct("<8sQQ")  # magic, run part's length, catalog's length
MISSING = -2
"""The stamp of a folder or file that does not exist."""
UNSETTLED = -1
"""The stamp of one changed within :data:`RACY_NS` of the build: never equal to a real one."""
RACY_NS = 2_000_000_000
"""File times tick coarsely (a few ms on Linux, 2 s on FAT): a change this recent may be
followed by another with the same time."""
_CORRUPT = (
    OSError,
    EOFError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ImportError,
    pickle.UnpicklingError,
    struct.error,
)


def _settled(mtime_ns: int, now_ns: int) -> int:
    return mtime_ns if mtime_ns < now_ns - RACY_NS else UNSETTLED


def _file_stamp(path: str, now_ns: int) -> tuple[str, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return path, MISSING, 0
    return path, _settled(st.st_mtime_ns, now_ns), st.st_size


class Tree:
    """One walk of a rules folder: its folders' stamps, its rule files and their examples."""

    def __init__(self, root: Path, now_ns: int):
        self.dirs: list[tuple[str, int]] = []
        self.files: list[tuple[str, os.stat_result]] = []
        """(path, stat) of every rule file, sorted. Only regular files are rule files: a FIFO,
        socket or device named ``*.yaml`` is never opened, and a folder reached twice through
        a symbolic link is walked once."""
        self.examples: dict[str, list[str]] = {}
        """Rule file path without ``.yaml`` -> the ``<name>.example*.log`` files beside it."""
        stack = [str(root)]
        seen: set[tuple[int, int]] = set()
        while stack:
            folder = stack.pop()
            try:
                st = os.stat(folder)
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                self.dirs.append((folder, _settled(st.st_mtime_ns, now_ns)))
                with os.scandir(folder) as it:
                    for entry in it:
                        name = entry.name
                        if entry.is_dir():
                            stack.append(entry.path)
                        elif name.endswith(".yaml"):
                            if name != "categories.yaml" and entry.is_file():
                                self.files.append((entry.path, entry.stat()))
                        elif name.endswith(".log"):
                            self._example(folder, name, entry.path)
            except OSError:
                continue
        self.files.sort(key=lambda f: f[0])
        for logs in self.examples.values():
            logs.sort()

    def _example(self, folder: str, name: str, path: str) -> None:
        at = name.find(".example")
        while at > 0:  # "a.example.example.log" is an example of a and of a.example
            self.examples.setdefault(os.path.join(folder, name[:at]), []).append(path)
            at = name.find(".example", at + 1)


def _code_key() -> str:
    """The rule model, its validation, the prefilter and the literals read from the regexes
    are part of the key: an index made by other code is never read."""
    from tracelens.rulebook import model, prefilter, rulefile

    return ":".join(
        str(Path(m.__file__ or "").stat().st_mtime_ns)
        for m in (model, rulefile, prefilter, required)
    )


def index_path(roots: list[Path]) -> Path | None:
    from tracelens import __version__
    from tracelens.paths import cache_home

    base = str(cache_home())
    if base.startswith("~"):  # no home directory to expand: no cache
        return None
    text = "\0".join([str(FORMAT), __version__, _code_key(), *map(str, roots)]).encode()
    key = f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}"  # zlib: hashlib's import costs more
    return Path(base) / "tracelens" / f"rules-{key}.index"


class Index:
    """The rules of a set of folders as a run uses them: from the index file, or just built."""

    def __init__(
        self,
        run: dict[str, Any],
        read: Callable[[int, int], bytes],
        catalog: Callable[[], dict[str, tuple]],
        models: dict[int, Rule] | None = None,
    ):
        self.run = run
        self.ids: list[str] = run["ids"]
        self.paths: list[str] = run["paths"]
        self.prefilter: Prefilter = run["prefilter"]
        self.wrappers: list[tuple[str | None, str | None]] = run["wrappers"]
        self.errors = [RuleError(*args) for args in run["errors"]]
        required.learn(run["literals"])
        self._read = read
        self._catalog = catalog
        self._models = models or {}

    def catalog(self) -> dict[str, tuple]:
        """path -> (mtime, size, crc32, id, replaces, needs, reports, offset, length, literals,
        secondary) of a rule file that loaded, or (mtime, size, crc32, error args) of one that
        did not."""
        return self._catalog()

    def examples(self, k: int) -> list[Path]:
        return [Path(p) for p in self.example_files(k)]

    def example_files(self, k: int) -> list[str]:
        """Rule ``k``'s example logs, as paths."""
        return list(self.run["examples"].get(k, ()))

    def with_examples(self) -> list[int]:
        return sorted(self.run["examples"])

    def symptoms(self) -> frozenset[int]:
        """The symptom rules (``secondary``), known without unpickling their models."""
        return self.run["symptoms"]

    def model(self, k: int) -> Rule:
        """Rule ``k``'s validated model (unpickled on each call: the caller keeps it)."""
        rule = self._models.get(k)
        if rule is not None:
            return rule
        try:
            return pickle.loads(self._read(self.run["offsets"][k], self.run["lengths"][k]))
        except _CORRUPT:  # a damaged model in an intact index: read the file itself
            path = Path(self.paths[k])
            root = next(r for r in self.run["roots"] if self.paths[k].startswith(r))
            return load_rule_file(path, Path(root))

    def fresh(self) -> bool:
        """Whether every folder and ``categories.yaml`` still has the stamp it had."""
        for path, mtime in self.run["dirs"]:
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return False
            except OSError:
                if mtime != MISSING:
                    return False
        for path, mtime, size in self.run["files"]:
            try:
                st = os.stat(path)
                now = (st.st_mtime_ns, st.st_size)
            except OSError:
                now = (MISSING, 0)
            if now != (mtime, size):
                return False
        return True

    def changed(self, ks: list[int]) -> bool:
        """Whether a file of these rules is not the one indexed (edited in place). A file
        written just before the index was built has no stamp to compare (:data:`UNSETTLED`):
        its checksum is (else a rule just written by ``rules new`` would rebuild the index
        at every log ``rules test`` reads for it, for two seconds)."""
        mtimes, sizes = self.run["mtimes"], self.run["sizes"]
        for k in ks:
            try:
                st = os.stat(self.paths[k])
            except OSError:
                return True
            if st.st_size != sizes[k]:
                return True
            if st.st_mtime_ns != mtimes[k] and (
                mtimes[k] != UNSETTLED or not self._same_content(k)
            ):
                return True
        return False

    def _same_content(self, k: int) -> bool:
        path = self.paths[k]
        try:
            return zlib.crc32(Path(path).read_bytes()) == self.catalog()[path][2]
        except (*_CORRUPT, KeyError):
            return False


def _open(path: Path, roots: list[Path]) -> Index | None:
    """The index stored at ``path`` for these folders, or None (missing, damaged, other)."""
    from tracelens import __version__

    try:
        with open(path, "rb") as fh:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        magic, run_len, cat_len = _HEAD.unpack_from(mm, 0)
        run = pickle.loads(mm[_HEAD.size : _HEAD.size + run_len])
        if (
            magic != _MAGIC
            or not isinstance(run, dict)
            or run.get("format") != FORMAT
            or run.get("version") != __version__
            or run.get("roots") != [str(r) for r in roots]
        ):
            return None
        cat_at = _HEAD.size + run_len
        blob_at = cat_at + cat_len

        def read(offset: int, length: int) -> bytes:
            if blob_at + offset + length > len(mm):
                raise ValueError("truncated index")
            return mm[blob_at + offset : blob_at + offset + length]

        def catalog() -> dict[str, tuple]:
            data = pickle.loads(mm[cat_at:blob_at])
            if not isinstance(data, dict):
                raise ValueError("not a catalog")
            return data

        return Index(run, read, catalog)
    except _CORRUPT:
        return None


def get(roots: list[Path], *, cache: bool = True, every_file: bool = True) -> Index:
    """The index of these folders: the stored one when it is current (with ``every_file``,
    every rule file is stat'ed too), else rebuilt, parsing only the files that changed, and
    stored again (a cache that cannot be read or written is simply not used)."""
    path = index_path(roots) if cache else None
    old = _open(path, roots) if path is not None else None
    if old is not None and not every_file and old.fresh():
        return old
    seeded = False
    first = index_path(roots[:1]) if len(roots) > 1 else None
    if old is None and path is not None and first is not None:
        # a new set of folders (a user's --rules beside the shipped ones): the files of the
        # first folder come from its own index where they are unchanged, as from an old index
        # of this set, and only the others are parsed (1,200 shipped rules parse in seconds)
        # (built first, and kept, when it is not there yet)
        old = _open(first, roots[:1])
        if old is None:
            old = get(roots[:1], every_file=every_file)
        seeded = True
    try:
        catalog = old.catalog() if old is not None else {}
    except _CORRUPT:
        old, catalog = None, {}
    new, data = _build(roots, old, catalog)
    if old is not None and not seeded and _same(old, new, catalog):
        return old
    if path is not None:
        # the first folder's own index is what a new set is seeded from, the shipped rules'
        # is what a plain run reads: the indexes of many other sets do not push them out
        shipped = index_path([shipped_rules_dir()])
        write_cache(path, data, spare=[p for p in (first, shipped) if p is not None])
    return new


def _same(old: Index, new: Index, catalog: dict[str, tuple]) -> bool:
    keys = ("dirs", "files", "cats", "examples", "errors")
    if any(old.run[k] != new.run[k] for k in keys):
        return False
    return {k: v[:3] for k, v in catalog.items()} == {k: v[:3] for k, v in new.catalog().items()}


def _cats_key(files: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    """The category lists' contents (their checksums): rules are validated against them."""
    out = []
    for path, _m, _s in files:
        try:
            out.append((path, zlib.crc32(Path(path).read_bytes())))
        except OSError:
            out.append((path, MISSING))
    return out


def _present(cats: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The category lists that exist: a folder without one adds no category."""
    return [c for c in cats if c[1] != MISSING]


def _build(
    roots: list[Path], old: Index | None, catalog: dict[str, tuple]
) -> tuple[Index, list[bytes]]:
    """Walk the folders, reuse what the old index holds of unchanged files (same stamp, or same
    checksum), parse the others; a rule of a later folder with the id of an earlier one is an
    error unless it says ``replaces: true``. Returns the index and the file's parts."""
    from tracelens import __version__

    now = time.time_ns()
    cat_files = [str(shipped_rules_dir() / "categories.yaml")]
    cat_files += [
        str(r / "categories.yaml") for r in roots if str(r / "categories.yaml") not in cat_files
    ]
    files = [_file_stamp(p, now) for p in cat_files]
    cats = _cats_key(files)
    if old is None or _present(old.run["cats"]) != _present(cats):
        catalog = {}  # another list of categories: every rule is validated again
    dirs: list[tuple[str, int]] = []
    new_catalog: dict[str, tuple] = {}
    blobs: list[bytes] = []
    offset = 0
    errors: list[tuple] = []
    by_id: dict[str, tuple] = {}  # id -> (path, record, examples, model or None)
    for root in roots:
        if not root.is_dir():
            dirs.append((str(root), MISSING))
            errors.append((str(root), None, "", "rules directory not found"))
            continue
        tree = Tree(root, now)
        dirs += tree.dirs
        for name, st in tree.files:
            rec, model, blob = _entry(name, st, root, catalog.get(name), old, now)
            if len(rec) == 4:
                new_catalog[name] = rec
                errors.append(rec[3])
                # a file that did not load is stat'ed on every run, like categories.yaml: its
                # fix, written in place, would leave its folder's stamp alone and the error on
                files.append((name, _settled(st.st_mtime_ns, now), st.st_size))
                continue
            new_catalog[name] = (*rec[:7], offset, len(blob), rec[7], rec[8])
            blobs.append(blob)
            offset += len(blob)
            rule_id, replaces = rec[3], rec[4]
            earlier = by_id.get(rule_id)
            if earlier is not None and not replaces:
                errors.append(
                    (
                        str(Path(name)),
                        None,
                        "id",
                        f"{rule_id!r} is also the id of {Path(earlier[0])}; rename the rule, or add"
                        " 'replaces: true' to replace that one",
                    )
                )
                continue  # the earlier rule stays
            by_id[rule_id] = (
                name,
                new_catalog[name],
                tree.examples.get(name[: -len(".yaml")]),
                model,
            )
    active = list(by_id.values())
    run: dict[str, Any] = {
        "format": FORMAT,
        "version": __version__,
        "roots": [str(r) for r in roots],
        "dirs": dirs,
        "files": files,
        "cats": cats,
        "ids": [rec[3] for _n, rec, _e, _m in active],
        "paths": [n for n, _r, _e, _m in active],
        "mtimes": array("q", [rec[0] for _n, rec, _e, _m in active]),
        "sizes": array("q", [rec[1] for _n, rec, _e, _m in active]),
        "offsets": array("q", [rec[7] for _n, rec, _e, _m in active]),
        "lengths": array("q", [rec[8] for _n, rec, _e, _m in active]),
        "examples": {k: ex for k, (_n, _r, ex, _m) in enumerate(active) if ex},
        "wrappers": [w for _n, rec, _e, _m in active for w in rec[6]],
        "errors": errors,
        "prefilter": Prefilter([rec[5] for _n, rec, _e, _m in active]),
        "literals": {p: lit for _n, rec, _e, _m in active for p, lit in rec[9].items()},
        "symptoms": frozenset(k for k, (_n, rec, _e, _m) in enumerate(active) if rec[10]),
    }
    models = {k: m for k, (_n, _r, _e, m) in enumerate(active) if m is not None}
    at: dict[int, int] = {}  # a blob's offset -> its place in blobs (no joined copy in memory)
    pos = 0
    for k, blob in enumerate(blobs):
        at[pos] = k
        pos += len(blob)
    run_bytes = pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL)
    cat_bytes = pickle.dumps(new_catalog, protocol=pickle.HIGHEST_PROTOCOL)
    index = Index(run, lambda off, _n: blobs[at[off]], lambda: new_catalog, models)
    head = _HEAD.pack(_MAGIC, len(run_bytes), len(cat_bytes))
    return index, [head, run_bytes, cat_bytes, *blobs]


def _entry(
    name: str, st: os.stat_result, root: Path, rec: tuple | None, old: Index | None, now: int
) -> tuple[tuple, Rule | None, bytes]:
    """A rule file's catalog record, its model when parsed now, and its pickled model."""
    mtime = _settled(st.st_mtime_ns, now)
    data: bytes | None = None
    if rec is None or (rec[0], rec[1]) != (st.st_mtime_ns, st.st_size):
        try:
            data = Path(name).read_bytes()
        except OSError:
            data = None
        crc = zlib.crc32(data) if data is not None else MISSING
        if rec is None or data is None or rec[1] != len(data) or rec[2] != crc:
            rec = None
    else:
        crc = rec[2]
    if rec is not None and old is not None:
        size = rec[1]
        if len(rec) == 4:
            return (mtime, size, crc, rec[3]), None, b""
        try:
            return (mtime, size, crc, *rec[3:7], rec[9], rec[10]), None, old._read(rec[7], rec[8])
        except _CORRUPT:
            pass  # parse it again
    size = len(data) if data is not None else st.st_size
    try:
        rule = load_rule_file(Path(name), root, data)
    except RuleError as err:
        return (mtime, size, crc, (err.path, err.line, err.field, err.message)), None, b""
    reports = [(r.type, r.message) for r in rule.reports]
    blob = pickle.dumps(rule, protocol=pickle.HIGHEST_PROTOCOL)
    # the literal each regex's matches hold, read once here instead of in every run
    lits = {p: required.required_literal(p) for p in sorted(rule_regexes(rule))}
    rec = (
        mtime,
        size,
        crc,
        rule.id,
        rule.replaces,
        required.rule_needs(rule),
        reports,
        lits,
        rule.secondary,
    )
    return rec, rule, blob
