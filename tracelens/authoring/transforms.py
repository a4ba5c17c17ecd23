"""The envelopes real logs come in, applied to a rule's example: container timestamps,
kubectl and compose prefixes, Ray and vLLM process prefixes, torchrun ranks, srun labels,
CRLF line ends, ANSI colour, a paste that lost its indentation. A rule must give the same rank-1 diagnosis under each."""

from __future__ import annotations

from collections.abc import Callable


def _each_line(prefix: Callable[[int], bytes], unless: bytes = b"") -> Callable[[bytes], bytes]:
    """Prefix every line (but those that already start with ``unless``: a launcher does not
    label its own labelled lines twice)."""

    def apply(raw: bytes) -> bytes:
        lines = raw.split(b"\n")
        last = lines.pop() if lines and lines[-1] == b"" else None
        out = [
            line if unless and line.startswith(unless) else prefix(k) + line
            for k, line in enumerate(lines)
        ]
        return b"\n".join(out) + (b"\n" if last is not None else b"")

    return apply


def _docker_ts(k: int) -> bytes:
    return b"2025-11-20T13:%02d:%02d.%09dZ " % (k // 3600 % 60, k // 60 % 60, k * 7919 % 10**9)


def _crlf(raw: bytes) -> bytes:
    return raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _ansi(raw: bytes) -> bytes:
    return b"\n".join(
        b"\x1b[0;36m" + line + b"\x1b[0m" if line else line for line in raw.split(b"\n")
    )


def _dedent(raw: bytes) -> bytes:
    """A traceback pasted into an issue or a chat without its code block: every line's leading
    blanks gone."""
    return b"\n".join(line.lstrip(b" \t") for line in raw.split(b"\n"))


TRANSFORMS: tuple[tuple[str, Callable[[bytes], bytes]], ...] = (
    ("docker-timestamps", _each_line(_docker_ts)),
    ("kubectl-prefix", _each_line(lambda k: b"[pod/worker-7f9c/main] ")),
    ("compose-prefix", _each_line(lambda k: b"app-1  | ")),
    ("ray-prefix", _each_line(lambda k: b"(RayWorkerWrapper pid=4155, ip=10.0.0.7) ")),
    ("torchrun-rank", _each_line(lambda k: b"[rank0]: ", unless=b"[rank")),
    ("srun-label", _each_line(lambda k: b"0: ")),
    ("crlf", _crlf),
    ("ansi-colour", _ansi),
    ("lost-indentation", _dedent),
)
