"""``tracelens ingest``: many logs into the incident store. Each file on its own (a bad file is
reported and skipped, a file that is not a log is listed and skipped), diagnosed on a process
pool or on Ray (:mod:`tracelens.fleet`), merged into the store in one transaction by this
process alone; each log counted once (by its content hash) unless ``--recount``."""

from __future__ import annotations

import sys

import click

from tracelens.cli.app import (
    ANY_PATH,
    FILE,
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
from tracelens.paths import store_file

LOCAL_RAY = "local"


def _ray_address(value: str | None) -> str | None:
    """``--ray`` alone: local Ray; ``--ray ADDRESS``: a cluster (``ray://HOST:PORT``,
    ``HOST:PORT`` or ``auto``). A path given after ``--ray`` by mistake is a one-line error."""
    if value is None or value == LOCAL_RAY:
        return value
    if value == "auto" or value.startswith("ray://") or (":" in value and "/" not in value):
        return value
    raise Failure(
        f"--ray {value!r}: not a Ray address (ray://HOST:PORT, HOST:PORT or auto); "
        "for local Ray put --ray after the paths"
    )


@click.command()
@click.argument("paths", nargs=-1, required=True, type=ANY_PATH)
@db_option
@redact_options
@click.option(
    "--recount",
    is_flag=True,
    help="Count a log again even when this same log (same content) was ingested before.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 1024),
    default=None,
    metavar="N",
    help="Processes that diagnose logs at once (default: this machine's cores; 1: in this "
    "process); with --ray, Ray Data workers (default: the cluster's CPUs).",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value=LOCAL_RAY,
    default=None,
    metavar="[ADDRESS]",
    help="Diagnose on Ray Data: --ray alone starts local Ray, --ray ADDRESS joins a cluster "
    "(ray://HOST:PORT, HOST:PORT, auto). Paths may be s3:// or gs:// URLs (with s3fs or "
    "gcsfs installed) that, on a cluster, its nodes can read. Needs pip install 'tracelens[ray]'.",
)
@click.option(
    "--results",
    "results_path",
    type=FILE,
    default=None,
    help="Also write one row per log (source, verdict, rule, category, fingerprints, facts) "
    "to this Parquet file (needs pyarrow: the ray extra).",
)
@rules_option
def ingest(
    paths,
    db_path,
    redact_regex,
    no_redact,
    recount,
    jobs,
    ray_address,
    results_path,
    rules_dirs,
) -> None:
    """Diagnose logs (files, or folders searched for *.log, *.txt, *.out, *.err and files
    without an extension) and store them as incidents.

    The same crash seen again increments its incident instead of creating a new one; the same
    log ingested again (same content) counts nothing twice, so an interrupted run can simply be
    run again. A file that cannot be read or diagnosed is reported and skipped; so is a file
    that is not a log (empty, binary, an image, a requirements list, environment variables, a
    JSON or YAML document), decided from its first bytes. Logs are diagnosed on a process pool
    (--jobs) or on Ray (--ray); the results go into the store in one transaction.

    Example:

        tracelens ingest /var/log/vllm/ crash-0412.log --results runs.parquet
    """
    long_running()
    from concurrent.futures.process import BrokenProcessPool

    from tracelens.fleet import pool, raydata
    from tracelens.fleet.raydata import FleetError
    from tracelens.fleet.results import ResultsError, require_pyarrow, write_parquet
    from tracelens.fleet.work import Settings, shown
    from tracelens.incidents.store import StoreError

    address = _ray_address(ray_address)
    urls = [p for p in paths if "://" in p and not p.startswith("file://")]
    if urls and address is None:
        raise Failure(
            f"{urls[0]}: object storage is read on Ray: add --ray "
            "(pip install 'tracelens[ray]', and s3fs or gcsfs)"
        )
    try:
        if results_path is not None:
            require_pyarrow()
        if address is not None:
            raydata.require_ray()
            items, missing = raydata.sources(paths)
        else:
            files, missing = pool.log_files(paths)
    except (ResultsError, FleetError) as exc:
        raise Failure(str(exc)) from None
    _load_rules(rules_dirs)  # a broken rule is one line here, before any work starts
    make_redactor(redact_regex, no_redact)  # likewise a bad --redact-regex
    settings = Settings(
        rules_dirs=tuple(rules_dirs),
        redact_regex=tuple(redact_regex),
        no_redact=no_redact,
        known_db=None if recount or results_path or address else str(store_file(db_path)),
        rows=results_path is not None,
    )
    rows: list[dict] = []
    started = False
    outcomes = None
    try:
        if address is None:
            # the pool starts first and works while the store is opened and checked (a
            # large store's check reads every page); nothing is written before that check
            outcomes = pool.diagnose_all(files, settings, jobs or pool.default_jobs())
            total = len(files)
        store = open_store(db_path)
        try:
            store.check_integrity()
        except StoreError as exc:  # a damaged database is never written into
            raise Failure(str(exc)) from None
        if address is not None:
            started = raydata.start(None if address == LOCAL_RAY else address)
            outcomes, total = raydata.diagnose_all(items, settings, jobs), len(items)
        assert outcomes is not None
        with click.progressbar(length=total, label="ingesting", file=sys.stderr) as bar:

            def seen(out) -> None:
                bar.update(1)
                if out.row is not None:
                    rows.append(out.row)

            tally = pool.merge(store, outcomes, recount=recount, seen=seen)
        if results_path is not None:
            write_parquet(rows, results_path)
    except StoreError as exc:
        raise Failure(str(exc)) from None
    except BrokenProcessPool:
        raise Failure(
            "a worker process died (out of memory?): nothing was stored; "
            "run again with fewer --jobs"
        ) from None
    except (ResultsError, FleetError) as exc:
        raise Failure(str(exc)) from None
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:  # a pool whose outcomes were not all read (a failure) stops
            close()
        if started:
            import ray

            ray.shutdown()
    for msg in [*missing, *tally.not_logs, *tally.skipped]:
        echo(f"tracelens: skipped {msg}", err=True)
    logs = total - len(tally.not_logs)
    echo(
        f"{logs} log(s): {tally.new} new incident(s), {tally.repeat} seen before, "
        f"{tally.healthy} without a failure, {tally.already} already ingested, "
        f"{len(tally.skipped)} skipped ({shown(store.path)})"
        + (f"; {len(tally.not_logs)} file(s) not a log" if tally.not_logs else "")
        + (f"; {len(missing)} path(s) not found" if missing else "")
        + (f"; {len(rows)} row(s) in {results_path}" if results_path is not None else "")
    )
    if missing:  # the rest went in; the exit code still says a path was wrong
        sys.exit(2)
