"""``tracelens ingest``: many logs into the incident store, each file on its own (a bad file is
reported and skipped), each log counted once (by its content hash) unless ``--recount``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from tracelens.cli.app import (
    ANY_PATH,
    Failure,
    _load_rules,
    db_option,
    echo,
    long_running,
    make_redactor,
    open_store,
    redact_options,
    rules_option,
)


def _shown(path: Path | str) -> str:
    """A file name as text that can be printed and stored: bytes that are not UTF-8 are
    shown as escapes (``bad\\xff.log``)."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _log_hash(path: Path) -> str:
    """The content hash that makes ingesting the same log twice count it once."""
    import hashlib

    digest = hashlib.sha256()  # hashlib.file_digest is Python 3.11+; tracelens runs on 3.10
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _ingest_files(paths) -> tuple[list[Path], list[str]]:
    """The files to ingest, and the paths given that do not exist (reported, not fatal)."""
    files: list[Path] = []
    missing: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += sorted(
                q for q in path.rglob("*") if q.is_file() and q.suffix in (".log", ".txt")
            )
        elif path.exists():
            files.append(path)
        else:
            missing.append(f"{_shown(p)}: no such file or directory")
    return files, missing


@click.command()
@click.argument("paths", nargs=-1, required=True, type=ANY_PATH)
@db_option
@redact_options
@click.option(
    "--recount",
    is_flag=True,
    help="Count a log again even when this same log (same content) was ingested before.",
)
@rules_option
def ingest(paths, db_path, redact_regex, no_redact, recount, rules_dirs) -> None:
    """Diagnose logs (files, or folders searched for *.log / *.txt) and store them as incidents.

    The same crash seen again increments its incident instead of creating a new one; the same
    log ingested again (same content) counts nothing twice, so an interrupted run can simply be
    run again. A file that cannot be read or diagnosed is reported and skipped.

    Example:

        tracelens ingest /var/log/vllm/ crash-0412.log
    """
    long_running()
    from tracelens.engine import parse_path, report
    from tracelens.incidents.incident import save
    from tracelens.incidents.store import StoreError

    files, missing = _ingest_files(paths)
    rules = _load_rules(rules_dirs)
    redactor = make_redactor(redact_regex, no_redact)
    store = open_store(db_path)
    try:
        store.check_integrity()
    except StoreError as exc:  # a damaged database is never written into
        raise Failure(str(exc)) from None
    counts = {"new": 0, "repeat": 0, "healthy": 0, "already": 0}
    skipped: list[str] = []
    with click.progressbar(files, label="ingesting", file=sys.stderr) as bar:
        for f in bar:
            outcome = _ingest_one(f, store, rules, redactor, recount, parse_path, report, save)
            if outcome in counts:
                counts[outcome] += 1
            else:
                skipped.append(outcome)
    for msg in [*missing, *skipped]:
        echo(f"tracelens: skipped {msg}", err=True)
    echo(
        f"{len(files)} log(s): {counts['new']} new incident(s), {counts['repeat']} seen before, "
        f"{counts['healthy']} without a failure, {counts['already']} already ingested, "
        f"{len(skipped)} skipped ({_shown(store.path)})"
        + (f"; {len(missing)} path(s) not found" if missing else "")
    )
    if missing:  # the rest went in; the exit code still says a path was wrong
        sys.exit(2)


def _ingest_one(f: Path, store, rules, redactor, recount: bool, parse_path, report, save) -> str:
    """Ingest one file: its outcome (new, repeat, healthy, already), or why it was skipped.
    Only a store that cannot be written stops the run."""
    from tracelens.incidents.store import StoreError
    from tracelens.read.scan import InputError

    name = _shown(f)
    try:
        digest = _log_hash(f)
        if not recount and store.has_log(digest):
            return "already"
        rep = report(parse_path(str(f)), rules)
        rec = save(store, rep, redactor, source=name, log_hash=digest, recount=recount)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    except InputError as exc:
        return _shown(str(exc))
    except OSError as exc:
        return f"{name}: cannot read ({exc.strerror or exc})"
    except Exception as exc:  # noqa: BLE001 (a log that breaks the analysis: the others still go in)
        return f"{name}: could not be diagnosed ({type(exc).__name__}: {exc})"
    if rec is None:
        return "healthy"
    if rec.duplicate:
        return "already"
    return "new" if rec.new else "repeat"
