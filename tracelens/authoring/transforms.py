"""The envelopes real logs come in, applied to a rule's example: container timestamps,
kubectl and compose prefixes, Ray and vLLM process prefixes, torchrun ranks, srun labels,
CRLF line ends, ANSI colour, a paste that lost its indentation, a Markdown quote, an indented
code block, JSON lines of structured loggers and collectors (each with its own message key, a
traceback kept as a list of lines). A rule must give the same rank-1 diagnosis under each."""

from __future__ import annotations

import json
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


def _quote(raw: bytes) -> bytes:
    """A log quoted in a GitHub issue or an e-mail reply: ``> `` before every line, ``>`` alone
    for a blank one."""
    return _lines(raw, lambda line: b"> " + line if line.strip() else b">")


def _indent(by: bytes) -> Callable[[bytes], bytes]:
    """A log pasted as a Markdown indented code block or into an e-mail: every line indented."""
    return lambda raw: _lines(raw, lambda line: by + line if line else line)


def _lines(raw: bytes, each: Callable[[bytes], bytes]) -> bytes:
    lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    last = lines.pop() if lines and lines[-1] == b"" else None
    return b"\n".join(each(line) for line in lines) + (b"\n" if last is not None else b"")


def _json_lines(key: str, **extra: str) -> Callable[[bytes], bytes]:
    """Every line one JSON object, its text under ``key`` (a structured logger's message key or
    a collector's), with the other fields ``extra`` that format writes."""

    def apply(raw: bytes) -> bytes:
        text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
        return "".join(
            json.dumps({**extra, key: line}) + "\n" for line in text.split("\n")[:-1]
        ).encode()

    return apply


def _export(kind: str) -> Callable[[bytes], bytes]:
    """The log as one JSON document an export gives, newest record first: Cloud Logging's
    download or ``gcloud logging read --format=json`` (a pretty-printed list of entries with
    ``textPayload``), or Loki's query answer (``data.result[].values`` of [time, line])."""

    def apply(raw: bytes) -> bytes:
        text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
        lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
        if kind == "loki":
            values = [[str(1764590400_000000000 + k * 1000), line] for k, line in enumerate(lines)]
            result = [{"stream": {"pod": "worker-0"}, "values": values[::-1]}]
            return json.dumps({"status": "success", "data": {"result": result}}).encode()
        entries = [
            {
                "textPayload": line,
                "resource": {"type": "k8s_container", "labels": {"pod_name": "worker-0"}},
                "timestamp": f"2025-12-01T12:00:{k // 1000000:02d}.{k % 1000000:06d}Z",
                "severity": "DEFAULT",
            }
            for k, line in enumerate(lines)
        ]
        return json.dumps(entries[::-1], indent=2).encode()

    return apply


def _in_traceback(line: str, inside: bool) -> tuple[bool, bool]:
    """(this line is part of a traceback, the traceback goes on after it)."""
    if line.startswith("Traceback (most recent call last)"):
        return True, True
    if not inside:
        return False, False
    if line[:1] in " \t" or line.startswith(("During handling", "The above exception")):
        return True, True
    if not line.strip():
        return True, True  # the blank line before "During handling"
    return True, False  # the exception line ends it


def _json_exc_info(raw: bytes) -> bytes:
    """python-json-logger's ``logger.warning(..., exc_info=True)``: each traceback (header to
    exception line) kept as a list of lines under ``exc_info`` of the record logged just
    above it; every other line a record of its own."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    out: list[dict] = []
    inside = False
    for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        part, inside_after = _in_traceback(line, inside)
        if part and not inside and (not out or "exc_info" in out[-1]):
            out.append({"levelname": "INFO", "message": ""})
        if part:
            out[-1].setdefault("exc_info", []).append(line)
        else:
            out.append({"levelname": "INFO", "message": line})
        inside = inside_after
    return "".join(json.dumps(o) + "\n" for o in out).encode()


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
    ("markdown-quote", _quote),
    ("indented-block", _indent(b"    ")),
    ("indented-tab", _indent(b"\t")),
    ("json-message", _json_lines("message", levelname="INFO", name="vllm")),
    ("json-otel-body", _json_lines("body", severity_text="INFO", timestamp="1732107601")),
    ("json-at-message", _json_lines("@message", **{"@timestamp": "2025-11-20T13:00:01Z"})),
    ("json-structlog-event", _json_lines("event", level="info", logger="trainer")),
    ("json-exc-info-list", _json_exc_info),
    ("cloud-logging-export", _export("cloud-logging")),
    ("loki-query", _export("loki")),
)
