"""Logs as people paste them: in a Markdown or e-mail quote, as an indented code block, as the
JSON lines of a structured logger or a collector. The reader takes the log out of each, and a
log that only looks a little like one is left as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracelens.authoring.transforms import TRANSFORMS
from tracelens.engine import parse, report
from tracelens.models import ERROR_LEVEL
from tracelens.read import jsonlines
from tracelens.read.logread import records_from_text
from tracelens.rulebook.load import default_rules

ROOT = Path(__file__).resolve().parent.parent
TB = [
    "Traceback (most recent call last):",
    '  File "/srv/app.py", line 3, in <module>',
    "    main()",
    "ValueError: boom",
]
NEW = [
    "markdown-quote",
    "indented-block",
    "indented-tab",
    "json-message",
    "json-otel-body",
    "json-at-message",
    "json-structlog-event",
    "json-exc-info-list",
    "cloud-logging-export",
    "loki-query",
]


def _texts(log: str) -> list[str]:
    return [r.text for r in records_from_text(log)]


def _jl(*objs: dict) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


@pytest.mark.parametrize(
    "log,texts",
    [
        # Markdown / e-mail quotes, a blank line as ">" alone, a quote quoted again
        ("> " + "\n> ".join(TB) + "\n", TB),
        ("> INFO start\n>\n> " + "\n> ".join(TB), ["INFO start", "", *TB]),
        ("> > " + "\n> > ".join(TB), TB),
        ("  > " + "\n  > ".join(TB), TB),
        # indented code blocks: four blanks, a tab; the log's own indentation kept inside
        ("    " + "\n    ".join(TB) + "\n", TB),
        ("\t" + "\n\t".join(TB) + "\n\n\tok", [*TB, "", "ok"]),
        ("        " + "\n        ".join(TB), TB),
        # not a quote or a code block: left as it is
        ("> python train.py\n" + "\n".join(TB), ["> python train.py", *TB]),
        ("\n".join(TB[1:3]), TB[1:3]),  # a traceback cut above its header: 2 blanks kept
        ("  a\n    b\n", ["  a", "    b"]),
        ("    a\nb\n", ["    a", "b"]),
    ],
)
def test_a_quote_or_a_code_block_is_taken_off(log, texts):
    assert _texts(log) == texts


@pytest.mark.parametrize(
    "log,texts",
    [
        # OpenTelemetry log data model: body (a string, or OTLP's stringValue), severity_text
        (_jl({"body": "load failed", "severity_text": "ERROR"}), ["ERROR: load failed"]),
        (_jl({"body": {"stringValue": "ok"}, "severityText": "INFO"}), ["ok"]),
        (
            _jl(
                {
                    "body": "crash",
                    "attributes": [
                        {"key": "exception.stacktrace", "value": {"stringValue": "\n".join(TB)}}
                    ],
                }
            ),
            ["crash", *TB],
        ),
        (
            _jl({"body": "x", "attributes": {"exception.stacktrace": "ValueError: x"}}),
            ["x", "ValueError: x"],
        ),
        # CloudWatch / ELK exports, structlog's JSONRenderer, Cloud Logging's jsonPayload
        (
            _jl({"@timestamp": "2025-01-01T00:00:00Z", "@message": "ValueError: x"}),
            ["ValueError: x"],
        ),
        (_jl({"event": "boom", "level": "error", "logger": "app"}), ["ERROR: boom"]),
        (_jl({"jsonPayload": {"message": "boom"}, "severity": "ERROR"}), ["ERROR: boom"]),
        # a traceback as a list of lines, one string, ECS's error.stack_trace
        (_jl({"message": "failed", "exc_info": TB}), ["failed", *TB]),
        (_jl({"msg": "failed", "exception": "\n".join(TB) + "\n"}), ["failed", *TB]),
        (_jl({"message": "failed", "error.stack_trace": TB}), ["failed", *TB]),
        # structlog's dict_tracebacks: outermost first, printed innermost first
        (
            _jl(
                {
                    "event": "failed",
                    "exception": [
                        {
                            "exc_type": "RuntimeError",
                            "exc_value": "outer",
                            "frames": [{"filename": "/a.py", "lineno": 9, "name": "run"}],
                        },
                        {"exc_type": "ValueError", "exc_value": "inner", "frames": []},
                    ],
                }
            ),
            [
                "failed",
                "Traceback (most recent call last):",
                "ValueError: inner",
                "The above exception was the direct cause of the following exception:",
                "",
                "Traceback (most recent call last):",
                '  File "/a.py", line 9, in run',
                "RuntimeError: outer",
            ],
        ),
        # not a log record: left as it is
        (_jl({"event": {"type": "Normal"}}), ['{"event": {"type": "Normal"}}']),
        (_jl({"exc_info": True, "message": "m"}), ["m"]),
    ],
)
def test_json_lines_of_structured_loggers_are_read(log, texts):
    lines = list(enumerate(log.splitlines(), 1))
    assert [t for _, t in jsonlines.unpack(lines) or lines] == texts


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize(
    "log,rule",
    [
        ("the-fp8-kv-cache-wall.log", "vllm/attention/mla-fp8-kv-unsupported"),
        ("cmake-cuda-build-cc1plus-killed.log", None),
    ],
)
def test_an_incident_keeps_its_first_rule_in_each_pasted_envelope(name, log, rule):
    path = ROOT / "corpus" / "incidents" / log
    want = rule
    if want is None:
        want = report(parse(path.read_bytes()), default_rules()).diagnoses[0].rule_id
    rep = report(parse(dict(TRANSFORMS)[name](path.read_bytes())), default_rules())
    assert rep.diagnoses[0].rule_id == want


HEALTHY = sorted((ROOT / "corpus" / "healthy").glob("*.log"))[::60]


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("log", HEALTHY, ids=[p.name for p in HEALTHY])
def test_a_healthy_log_stays_healthy_in_each_pasted_envelope(name, log):
    rep = report(parse(dict(TRANSFORMS)[name](log.read_bytes())), default_rules())
    assert [d.rule_id for d in rep.diagnoses if d.severity in ERROR_LEVEL] == []


def _interleaved(*exc_lines: str) -> bytes:
    """One traceback per rank, their lines interleaved one by one with no rank prefix."""
    tbs = [
        [
            TB[0],
            f'  File "/srv/train.py", line {10 + r}, in <module>',
            "    dist.barrier()",
            exc,
        ]
        for r, exc in enumerate(exc_lines)
    ]
    return ("\n".join(line for row in zip(*tbs) for line in row) + "\n").encode()


@pytest.mark.parametrize(
    "log,failures",
    [
        # three ranks' exception lines of one type, one below the other: each its own failure
        (
            _interleaved(
                *(f"torch.distributed.DistBackendError: [Rank {r}] timeout" for r in range(3))
            ),
            [f"torch.distributed.DistBackendError: [Rank {r}] timeout" for r in range(3)],
        ),
        (
            _interleaved("RuntimeError: a", "RuntimeError: b"),
            ["RuntimeError: a", "RuntimeError: b"],
        ),
        # a message whose next line names another type is still one message
        (
            (("\n".join(TB[:3]) + "\nRuntimeError: outer\nValueError: detail\n").encode()),
            ["RuntimeError: outer\nValueError: detail"],
        ),
    ],
)
def test_interleaved_ranks_keep_every_exception_line(log, failures):
    doc = parse(log)
    got = [
        f"{tb.exception.type}: {tb.exception.message}"
        for tb in doc.tracebacks
        if tb.exception is not None
    ] + [e.text for e in doc.errors]
    assert sorted(got) == sorted(failures)


def _warned(level: str) -> str:
    return _jl(
        {"message": "2025-02-03 09:12:46,500 INFO app: start"},
        {"message": f"2025-02-03 09:12:46,581 {level} app: skipping a bad record", "exc_info": TB},
        {"message": "2025-02-03 09:12:46,600 INFO app: done, 10 records read"},
    )


@pytest.mark.parametrize(
    "log,failed",
    [
        # a traceback a handler logged at warning level under exc_info of the warning's
        # record (every line of it has that record's line number): handled
        (_warned("WARNING"), False),
        # the same at error level: a failure
        (_warned("ERROR"), True),
    ],
)
def test_a_traceback_logged_under_exc_info_is_handled_as_its_level_says(log, failed):
    rep = report(parse(log.encode()), default_rules())
    assert any(d.severity in ERROR_LEVEL for d in rep.diagnoses) == failed


EXPORT_TB = [
    "Traceback (most recent call last):",
    '  File "/app/serve.py", line 3, in main',
    "KeyError: 'x'",
]


@pytest.mark.parametrize(
    "document,texts",
    [
        # Cloud Logging's download: a pretty-printed list, newest first
        (
            json.dumps(
                [
                    {"textPayload": line, "timestamp": f"2026-01-02T03:04:05.{9 - k}Z"}
                    for k, line in enumerate(reversed(EXPORT_TB))
                ],
                indent=2,
            ),
            EXPORT_TB,
        ),
        # aws logs filter-log-events: {"events": [...]}, times in milliseconds
        (
            json.dumps(
                {
                    "events": [
                        {"timestamp": 1767000000000 + k, "message": line + "\n"}
                        for k, line in enumerate(EXPORT_TB)
                    ]
                }
            ),
            EXPORT_TB,
        ),
        # Elasticsearch's hits
        (
            json.dumps(
                {
                    "hits": {
                        "hits": [
                            {"_source": {"@timestamp": f"2026-01-02T03:04:0{k}Z", "message": line}}
                            for k, line in enumerate(EXPORT_TB)
                        ]
                    }
                }
            ),
            EXPORT_TB,
        ),
        # Loki's query answer: two streams merged by time
        (
            json.dumps(
                {
                    "data": {
                        "result": [
                            {
                                "stream": {"a": "1"},
                                "values": [
                                    ["1767000000000000002", EXPORT_TB[2]],
                                    ["1767000000000000000", EXPORT_TB[0]],
                                ],
                            },
                            {
                                "stream": {"a": "2"},
                                "values": [["1767000000000000001", EXPORT_TB[1]]],
                            },
                        ]
                    }
                }
            ),
            EXPORT_TB,
        ),
        # JSON that holds no log records is no log export
        (json.dumps([1, 2, 3]), None),
        ("[" * 100_000 + "]" * 100_000, None),  # deeper than the JSON decoder's recursion
        (json.dumps({"model": "llama", "layers": [{"dim": 4}]}, indent=2), None),
    ],
    ids=[
        "cloud-logging",
        "cloudwatch-events",
        "elasticsearch",
        "loki",
        "numbers",
        "deep",
        "config",
    ],
)
def test_a_log_exported_as_one_json_document_is_read_in_time_order(document, texts):
    lines = list(enumerate(document.splitlines(), 1))
    unpacked = jsonlines.unpack(lines, document)
    assert (None if unpacked is None else [t for _, t in unpacked]) == texts


def test_an_export_in_document_order_keeps_the_documents_line_numbers():
    document = json.dumps([{"textPayload": line} for line in EXPORT_TB], indent=2)
    unpacked = jsonlines.unpack(list(enumerate(document.splitlines(), 1)), document)
    where = {text: n for n, text in unpacked}
    for text, n in where.items():
        assert json.dumps(text)[1:-1] in document.splitlines()[n - 1]
