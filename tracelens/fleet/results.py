"""One row per log in a Parquet file (``tracelens ingest --results FILE.parquet``): what a
platform team loads into a data frame or a query engine. Every column is text; ``facts`` is a
JSON object; the log's fields are redacted like the store's."""

from __future__ import annotations

import os
from typing import Any

COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "the log's path or URL"),
    ("log_hash", "SHA-256 of the log's bytes"),
    ("verdict", "failed, warnings, healthy; error when it could not be diagnosed"),
    ("rule", "the first diagnosis's rule id (unrecognized: no rule knows the failure)"),
    ("category", "the first diagnosis's category"),
    ("severity", "the first diagnosis's severity"),
    ("title", "the first diagnosis's title"),
    ("fingerprint", "the incident's fingerprint (the same bug), when the log shows a failure"),
    ("fingerprint_fine", "the occurrence's fine fingerprint (the same place and message)"),
    ("facts", "the facts read from the log, a JSON object"),
    ("error", "why the log could not be read or diagnosed"),
)
"""(name, meaning) of each column, in order."""


class ResultsError(Exception):
    """The results file cannot be written (one-line message)."""


def require_pyarrow() -> None:
    """Fail early, in one line, when pyarrow is not installed."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ResultsError(
            "--results needs pyarrow: pip install 'tracelens[ray]' (or pip install pyarrow)"
        ) from None


def write_parquet(rows: list[dict[str, Any]], path: str) -> None:
    """Write the rows (in order) to ``path``, replacing it whole (a temporary file renamed)."""
    require_pyarrow()
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.string()) for name, _ in COLUMNS])
    table = pa.Table.from_pylist(
        [{name: row.get(name) for name, _ in COLUMNS} for row in rows], schema=schema
    )
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except (OSError, pa.ArrowException) as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        what = getattr(exc, "strerror", None) or exc
        raise ResultsError(f"{path}: cannot write the results ({what})") from None


def read_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a results file (for checks and tests)."""
    require_pyarrow()
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()
