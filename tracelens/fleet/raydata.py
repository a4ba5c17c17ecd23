"""Many logs on Ray (``tracelens ingest PATH... --ray [ADDRESS]``, the ``tracelens[ray]``
extra): the diagnosis mapped over a Ray Data dataset of the logs, on local Ray or an existing
cluster. Paths are local files and folders or fsspec URLs (``s3://``, ``gs://`` ...: each
needs its fsspec filesystem package installed); with a cluster, every path must be readable
from its nodes, and tracelens installed there. Outcomes come back to this process, which alone
writes the store."""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterable, Iterator
from typing import Any

from tracelens.fleet.pool import LOG_SUFFIXES, log_files
from tracelens.fleet.work import Outcome, Settings, diagnose_data, setup, shown

BATCH = 16
"""Logs handed to a worker at a time."""

PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs"}
PACKAGES.update({"abfs": "adlfs", "abfss": "adlfs", "hf": "huggingface_hub"})
"""The package that reads each kind of URL."""


class FleetError(Exception):
    """Ray or a filesystem cannot be used (one-line message)."""


def require_ray() -> None:
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        raise FleetError("--ray needs the ray extra: pip install 'tracelens[ray]'") from None


def is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of a URL and the path in it; one line naming the package to
    install when it is missing."""
    import fsspec

    protocol = url.split("://", 1)[0].lower()
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:
        package = PACKAGES.get(protocol)
        if package is None:
            raise FleetError(f"reading {protocol}:// paths: {exc}") from None
        raise FleetError(
            f"reading {protocol}:// paths needs {package}: pip install {package}"
        ) from None
    except ValueError as exc:
        raise FleetError(f"{url}: {exc}") from None


def sources(paths: Iterable[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(shown name, path or URL to read) of every file under the paths, and the paths that do
    not exist."""
    items: list[tuple[str, str]] = []
    missing: list[str] = []
    for p in paths:
        if not is_url(p):
            files, gone = log_files([p.removeprefix("file://")])
            items += [(shown(f), f) for f in files]
            missing += gone
            continue
        fs, root = filesystem(p)
        try:
            if fs.isdir(root):
                found = sorted(
                    f
                    for f in fs.find(root)
                    if not any(part.startswith(".") for part in f[len(root) :].split("/"))
                    and os.path.splitext(f)[1].lower() in LOG_SUFFIXES
                )
                items += [(fs.unstrip_protocol(f), fs.unstrip_protocol(f)) for f in found]
            elif fs.exists(root):
                items.append((p, p))
            else:
                missing.append(f"{p}: no such file or directory")
        except OSError as exc:
            raise FleetError(f"{p}: cannot list ({exc})") from None
    return items, missing


def _read(path: str) -> bytes:
    if not is_url(path):
        with open(path, "rb") as fh:
            return fh.read()
    import fsspec

    with fsspec.open(path, "rb") as fh:
        return fh.read()


class _Diagnose:
    """A Ray Data worker: rules loaded once, then batches of logs diagnosed."""

    settings = Settings()

    def __init__(self) -> None:
        setup(self.settings)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        outcomes = []
        for source, path in zip(batch["source"], batch["path"]):
            try:
                outcome = diagnose_data(_read(str(path)), str(source))
            except OSError as exc:
                outcome = Outcome(str(source), skipped=f"{source}: cannot read ({exc})")
            outcomes.append(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
        return {"index": list(batch["index"]), "outcome": outcomes}


def start(address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to Ray (``None``: start it locally); whether this call started it."""
    import ray

    if ray.is_initialized():
        return False
    # Ray's core logs warnings of its own to stderr (one about Ray Data's workers'
    # constructor arguments on every run); its failures still reach us as exceptions
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")
    try:
        ray.init(
            address=address,
            num_cpus=num_cpus if address is None else None,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
        )
    except Exception as exc:  # noqa: BLE001 (Ray raises many kinds; each is one line here)
        where = f"the Ray cluster at {address}" if address else "local Ray"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FleetError(f"cannot start {where}: {first}") from None
    return True


def diagnose_all(
    items: list[tuple[str, str]], settings: Settings, workers: int | None = None
) -> Iterator[Outcome]:
    """Each item's outcome, in the order of ``items``, diagnosed by Ray Data workers (one per
    CPU of the cluster, or ``workers``). Ray must be started (:func:`start`)."""
    import ray
    import ray.data
    import ray.exceptions

    if not items:
        return
    for name in ("ray", "ray.data"):  # Ray Data's progress and plan lines: not ours to show
        logging.getLogger(name).setLevel(logging.ERROR)
    if workers is None:
        workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
    workers = max(1, min(workers, -(-len(items) // BATCH)))
    ds = ray.data.from_items(
        [{"index": k, "source": s, "path": p} for k, (s, p) in enumerate(items)],
        override_num_blocks=max(1, min(len(items) // BATCH, 8 * workers)),
    ).map_batches(
        # the settings ride on the class (sent by value), not as constructor arguments,
        # which Ray would keep in its object store for actor restarts
        type("Diagnose", (_Diagnose,), {"settings": settings}),
        batch_size=BATCH,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
    )
    done: dict[int, bytes] = {}
    try:
        for row in ds.iter_rows():
            done[int(row["index"])] = row["outcome"]
    except ray.exceptions.RayError as exc:  # a worker died, the cluster went away ...
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        raise FleetError(f"Ray: {lines[0]}") from None
    for k in range(len(items)):
        yield pickle.loads(done[k])
