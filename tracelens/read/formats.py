"""File formats known by their first bytes: compressed logs, read through their decompressor,
and files that are no log at all (images, archives, executables, databases).

A rotated or archived log is often compressed (``job.log.1.gz``, ``rank0.log.xz``); read as it
lies it is binary noise in which no failure can be found, so a failing log would read as a
healthy one. gzip, bzip2 and xz are read with the standard library; zstd with the
``zstandard`` package where it is installed (else a one-line error says how to decompress it).
This module imports nothing of tracelens: the command's early scan of a large file
(:mod:`tracelens.read.prescan`) asks it first.

>>> compression(b"\\x1f\\x8b\\x08\\x00"), compression(b"INFO starting")
('gzip', None)
>>> not_a_log(b"\\x89PNG\\r\\n\\x1a\\n...."), not_a_log(b"Traceback (most recent call last):")
('a PNG image', None)
"""

from __future__ import annotations

from typing import BinaryIO

HEAD = 512
"""Bytes enough to hold every signature below (tar's is at offset 257)."""

COMPRESSED: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x1f\x8b", "gzip"),
    (4, b"1AY&SY", "bzip2"),
    (0, b"\xfd7zXZ\x00", "xz"),
    (0, b"\x28\xb5\x2f\xfd", "zstd"),
)
"""(offset, bytes, format) of the compressed formats a log is read through."""

NOT_LOGS: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"GIF87a", "a GIF image"),
    (0, b"GIF89a", "a GIF image"),
    (0, b"II*\x00", "a TIFF image"),
    (0, b"MM\x00*", "a TIFF image"),
    (8, b"WEBP", "a WebP image"),
    (0, b"%PDF-", "a PDF document"),
    (0, b"PK\x03\x04", "a zip archive (extract the log from it first)"),
    (0, b"7z\xbc\xaf\x27\x1c", "a 7-zip archive (extract the log from it first)"),
    (257, b"ustar", "a tar archive (extract the log from it first)"),
    (0, b"\x7fELF", "an executable (ELF)"),
    (0, b"SQLite format 3\x00", "an SQLite database"),
    (0, b"PAR1", "a Parquet file"),
    (0, b"\x93NUMPY", "a NumPy array"),
)
"""(offset, bytes, what the file is) of formats that are never a log."""


def _first(table: tuple[tuple[int, bytes, str], ...], head: bytes) -> str | None:
    for offset, magic, what in table:
        if head[offset : offset + len(magic)] == magic:
            return what
    return None


def compression(head: bytes) -> str | None:
    """The compressed format whose signature ``head`` starts with, or None."""
    found = _first(COMPRESSED, head)
    if found == "bzip2" and not head.startswith(b"BZh"):
        return None
    return found


def not_a_log(head: bytes) -> str | None:
    """What a file starting with ``head`` is, when its first bytes say it is no log."""
    return _first(NOT_LOGS, head)


class Unreadable(Exception):
    """A compressed input that cannot be read at all. ``str()`` is the reason, one line."""


def _opener(kind: str, src: BinaryIO) -> BinaryIO:
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=src, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        import bz2

        return bz2.BZ2File(src, "rb")  # type: ignore[return-value]
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(src, "rb")  # type: ignore[return-value]
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        raise Unreadable(
            "zstd-compressed: decompress it first (zstd -d FILE, or zstdcat FILE | tracelens "
            "diagnose -), or install the zstandard package"
        ) from None
    return zstandard.ZstdDecompressor().stream_reader(src, read_across_frames=True)


def decompress(
    kind: str, src: BinaryIO, write, limit: int, chunk: int = 64 << 10
) -> tuple[int, str | None]:
    """Decompress ``src`` (format ``kind``) into ``write``, at most ``limit`` bytes: (bytes
    written, a one-line notice or None). A stream cut short or damaged after some bytes keeps
    those bytes, with a notice saying so (read ``chunk`` bytes at a time, so that little of what a
    damaged stream held is lost); one that gives nothing raises :class:`Unreadable`."""
    size = 0
    try:
        with _opener(kind, src) as stream:
            while size < limit:
                data = stream.read(min(chunk, limit - size))
                if not data:
                    return size, None
                write(data)
                size += len(data)
            more = stream.read(1)
    except Unreadable:
        raise
    except Exception as exc:  # noqa: BLE001  (zlib.error, EOFError, OSError, LZMAError, ZstdError)
        reason = str(exc).strip() or type(exc).__name__
        if size == 0:
            raise Unreadable(f"not a readable {kind} file ({reason})") from None
        return size, (
            f"the {kind} stream is cut short or damaged after {size} bytes ({reason}); "
            "what came before is analyzed"
        )
    if more:
        return size, (
            f"decompressed the first {limit >> 20} MiB only, the cap for a compressed log; "
            "the rest is not analyzed"
        )
    return size, None


def unpacked(data: bytes, limit: int) -> bytes:
    """``data`` decompressed in memory (up to ``limit`` bytes, as far as a damaged stream
    goes) when it starts with a compressed format's signature, else ``data`` itself. Raises
    :class:`Unreadable` for a stream that gives nothing."""
    kind = compression(data[:HEAD])
    if kind is None:
        return data
    import io

    out = io.BytesIO()
    decompress(kind, io.BytesIO(data), out.write, limit)
    return out.getvalue()
