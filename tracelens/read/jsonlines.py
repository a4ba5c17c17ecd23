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

_TEXT_KEYS = ("log", "message", "msg", "MESSAGE", "textPayload", "body", "@message", "event")
"""Where the line's text is, by writer: docker json-file, Fluentd and Fluent Bit (``log``);
python-json-logger and most structured loggers (``message``, ``msg``); journald
(``MESSAGE``); Cloud Logging (``textPayload``, or ``message`` in ``jsonPayload``);
OpenTelemetry's log data model (``body``, a string or OTLP's ``{"stringValue": ...}``);
CloudWatch Logs Insights and Logstash/ELK exports (``@message``); structlog's JSONRenderer
(``event``)."""
_NESTED = ("jsonPayload", "fields", "payload")
"""Objects a writer nests the record in (Cloud Logging's ``jsonPayload``, Vector/Loki's
``fields``), tried for the text keys when the top level has none."""
_EXTRA_KEYS = (
    "exc_info",
    "exc_text",
    "exception",
    "stack_trace",
    "stacktrace",
    "traceback",
    "stack",
    "error.stack_trace",
    "exception.stacktrace",
)
"""Where a structured logger puts the traceback of the exception it logged: one string, a list
of lines (python-json-logger with a list formatter, ECS ``error.stack_trace``), structlog's
``dict_tracebacks`` (a list of ``{"exc_type", "exc_value", "frames"}``), OpenTelemetry's
``exception.stacktrace`` attribute."""
_LEVEL_KEYS = ("level", "levelname", "severity", "severity_text", "severityText", "log.level")
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


def _string(value: object) -> str | None:
    """A field's text: a string, or OTLP's ``{"stringValue": ...}``."""
    if isinstance(value, dict):
        value = value.get("stringValue")
    return value if isinstance(value, str) else None


def _frames(exc: dict) -> list[str]:
    """structlog's ``dict_tracebacks`` entry as the lines Python would have printed."""
    out = ["Traceback (most recent call last):"]
    for f in exc.get("frames") or []:
        if isinstance(f, dict):
            out.append(f'  File "{f.get("filename")}", line {f.get("lineno")}, in {f.get("name")}')
            if isinstance(f.get("line"), str) and f["line"].strip():
                out.append("    " + f["line"].strip())
    value = exc.get("exc_value")
    out.append(f"{exc.get('exc_type')}: {value}" if value else str(exc.get("exc_type")))
    return out


def _traceback(value: object) -> str | None:
    """The text of a traceback field: a string, a list of lines, structlog's list of
    exceptions (outermost first; printed innermost first, as Python chains them)."""
    if isinstance(value, str):
        return value.rstrip("\n") if value.strip() else None
    if isinstance(value, list) and value:
        if all(isinstance(v, str) for v in value):
            return "\n".join(v.rstrip("\n") for v in value) or None
        excs = [v for v in value if isinstance(v, dict) and "exc_type" in v]
        if excs:
            cause = "\nThe above exception was the direct cause of the following exception:\n\n"
            return cause.join("\n".join(_frames(e)) for e in reversed(excs))
    return None


def _attributes(obj: dict) -> dict:
    """OpenTelemetry's attributes as a mapping (OTLP JSON writes a list of key/value pairs)."""
    attrs = obj.get("attributes")
    if isinstance(attrs, list):
        return {a.get("key"): a.get("value") for a in attrs if isinstance(a, dict)}
    return attrs if isinstance(attrs, dict) else {}


def _text(obj: dict) -> str | None:
    key = next((k for k in _TEXT_KEYS if _string(obj.get(k)) is not None), None)
    if key is None:
        inner = next((obj[k] for k in _NESTED if isinstance(obj.get(k), dict)), None)
        if inner is None or not any(_string(inner.get(k)) is not None for k in _TEXT_KEYS):
            return None
        obj = {**obj, **inner}
        key = next(k for k in _TEXT_KEYS if _string(obj.get(k)) is not None)
    text = (_string(obj[key]) or "").rstrip("\n")
    level = next((obj[k] for k in _LEVEL_KEYS if isinstance(obj.get(k), str)), "")
    word = _LEVELS.get(level.lower())
    if word and key != "log" and not text.startswith(word):
        text = f"{word}: {text}"  # read as a logger line of that level
    attrs = _attributes(obj) if "attributes" in obj else {}
    for k in _EXTRA_KEYS:
        tb = _traceback(_string(attrs[k]) if k in attrs else obj.get(k))
        if tb is not None:
            text += "\n" + tb
    return text


def unpack(lines: list[tuple[int, str]], text: str = "") -> list[tuple[int, str]] | None:
    """The lines of the text each JSON object holds (an object's text of several lines keeps
    its line's number), or ``None`` when the log's first line is no such object; with the
    log's ``text``, a log exported as one JSON document (:func:`unpack_document`) too."""
    first = next((raw for _, raw in lines if raw.strip()), "")
    obj = _entry(first)
    if obj is None or _text(obj) is None:
        return unpack_document(text) if text else None
    out: list[tuple[int, str]] = []
    for n, raw in lines:
        obj = _entry(raw)
        held = _text(obj) if obj is not None else None
        if held is None:
            out.append((n, raw))
        else:
            out.extend((n, part) for part in held.split("\n"))
    return out


_LISTS = ("entries", "events", "logs", "records", "items", "results", "data")
"""Keys under which an export keeps its list of records (Cloud Logging's API ``entries``,
``aws logs filter-log-events``'s ``events`` ...)."""
_TIME_KEYS = ("timestamp", "@timestamp", "time", "receiveTimestamp", "__REALTIME_TIMESTAMP", "ts")


def _records_of(doc: object) -> list[tuple[object, str]] | None:
    """(time, text) of each record an exported JSON document holds: a list of records (Cloud
    Logging's download, ``gcloud logging read --format=json``), an object with such a list
    (``entries``, ``events`` ...), Elasticsearch's ``hits.hits[]._source``, Loki's query answer
    (``data.result[].values`` of [time, line] pairs)."""
    if isinstance(doc, dict):
        hits = doc.get("hits")
        if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
            doc = [h.get("_source") for h in hits["hits"] if isinstance(h, dict)]
        elif isinstance(doc.get("data"), dict) and isinstance(doc["data"].get("result"), list):
            pairs = [
                (v[0], v[1])
                for s in doc["data"]["result"]
                if isinstance(s, dict)
                for v in s.get("values") or []
                if isinstance(v, list) and len(v) >= 2 and isinstance(v[1], str)
            ]
            return [(int(t) if str(t).isdigit() else t, line) for t, line in pairs] or None
        else:
            doc = next((doc[k] for k in _LISTS if isinstance(doc.get(k), list)), None)
    if not isinstance(doc, list) or not doc:
        return None
    out = []
    for obj in doc:
        text = _text(obj) if isinstance(obj, dict) else None
        if text is None:
            return None  # not a list of log records
        stamp = next((obj[k] for k in _TIME_KEYS if obj.get(k) not in (None, "")), None)
        out.append((stamp, text))
    return out


def _sort_key(stamp: object) -> float | None:
    """A record's time as a number (epoch integers kept whole: Loki's are nanoseconds)."""
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return stamp
    if isinstance(stamp, str):
        if stamp.isdigit():
            return int(stamp)
        from datetime import datetime

        try:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def unpack_document(text: str) -> list[tuple[int, str]] | None:
    """The lines of a log exported as one JSON document (pretty-printed or not), in time
    order: exports list the newest record first as often as not. Each record's lines are
    numbered from the document's line where that record's text is, while the records keep the
    document's order; put in time order they are numbered one record a line from 1. ``None``
    when the text is no such document.

    >>> unpack_document('[{"textPayload": "b", "timestamp": "2026-01-02T03:04:05.2Z"},'
    ...                 ' {"textPayload": "a", "timestamp": "2026-01-02T03:04:05.15Z"}]')
    [(1, 'a'), (2, 'b')]
    """
    import json

    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's stack
        return None
    records = _records_of(doc)
    if records is None:
        return None
    keys = [_sort_key(stamp) for stamp, _ in records]
    order = list(range(len(records)))
    if all(k is not None for k in keys):
        order.sort(key=lambda i: keys[i])  # type: ignore[arg-type,return-value]
    if order == list(range(len(records))):
        where = _lines_of([t for _, t in records], text)
    else:
        where = list(range(1, len(records) + 1))
    out: list[tuple[int, str]] = []
    for n, i in zip(where, order):
        out.extend((n, part) for part in records[i][1].split("\n"))
    return out


def _lines_of(texts: list[str], doc: str) -> list[int]:
    """The document's line number of each record's text (found in turn as JSON writes it);
    one record a line from 1 when a text cannot be found."""
    import json

    out, pos, line = [], 0, 1
    for t in texts:
        encoded = json.dumps(t.split("\n")[0])[1:-1]
        at = doc.find(encoded, pos) if encoded else -1
        if at < 0:
            return list(range(1, len(texts) + 1))
        line += doc.count("\n", pos, at)
        out.append(line)
        pos = at
    return out
