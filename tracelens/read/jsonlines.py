"""Logs kept as JSON lines: each line an object holding the program's output.

Docker's ``json-file`` driver (``/var/lib/docker/containers/*/*-json.log``), Fluentd and Fluent
Bit keep a container's output as ``{"log": "...\\n", "stream": "stderr", "time": "..."}``;
``journalctl -o json`` as ``{"MESSAGE": ...}``; Cloud Logging exports as ``{"textPayload": ...}``;
structured loggers as ``{"level": "error", "message": ..., "exc_info": "Traceback ..."}``. The
reader takes the text out of each object, so the tracebacks and logger lines inside are read as
if the program had printed them; an error or warning level the object gives is kept.

>>> unpack([(1, '{"log":"Traceback (most recent call last):\\\\n","stream":"stderr"}'),
...         (2, '{"log":"RuntimeError: boom\\\\n","stream":"stderr"}')])
[(1, 'Traceback (most recent call last):'), (2, 'RuntimeError: boom')]
>>> unpack([(1, '{"level": "error", "message": "load failed", "exc_info": "ValueError: x"}')])
[(1, 'ERROR: load failed'), (1, 'ValueError: x')]
>>> unpack([(1, "plain text")]) is None
True
"""

from __future__ import annotations

_TEXT_KEYS = ("log", "message", "msg", "MESSAGE", "textPayload")
"""Where the line's text is, by collector: docker/Fluentd, structured loggers, journald,
Cloud Logging."""
_EXTRA_KEYS = ("exc_info", "exception", "stack_trace", "traceback", "stack")
"""Where a structured logger puts the traceback of the exception it logged."""
_LEVEL_KEYS = ("level", "levelname", "severity")
_LEVELS = {
    "error": "ERROR",
    "critical": "CRITICAL",
    "fatal": "CRITICAL",
    "warning": "WARNING",
    "warn": "WARNING",
}


def _entry(raw: str) -> dict | None:
    s = raw.strip()
    if not s.startswith("{"):
        return None
    import json  # only for a log that starts with an object (most never do)

    try:
        obj = json.loads(s)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _text(obj: dict) -> str | None:
    key = next((k for k in _TEXT_KEYS if isinstance(obj.get(k), str)), None)
    if key is None:
        return None
    text = obj[key].rstrip("\n")
    level = next((obj[k] for k in _LEVEL_KEYS if isinstance(obj.get(k), str)), "")
    word = _LEVELS.get(level.lower())
    if word and key != "log" and not text.startswith(word):
        text = f"{word}: {text}"  # read as a logger line of that level
    for k in _EXTRA_KEYS:
        if isinstance(obj.get(k), str) and obj[k].strip():
            text += "\n" + obj[k].rstrip("\n")
    return text


def unpack(lines: list[tuple[int, str]]) -> list[tuple[int, str]] | None:
    """The lines of the text each JSON object holds (an object's text of several lines keeps
    its line's number), or ``None`` when the log's first line is no such object."""
    first = next((raw for _, raw in lines if raw.strip()), "")
    obj = _entry(first)
    if obj is None or _text(obj) is None:
        return None
    out: list[tuple[int, str]] = []
    for n, raw in lines:
        obj = _entry(raw)
        text = _text(obj) if obj is not None else None
        if text is None:
            out.append((n, raw))
        else:
            out.extend((n, part) for part in text.split("\n"))
    return out
