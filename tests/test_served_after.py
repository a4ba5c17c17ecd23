"""A request that failed inside a server's application (answered 500) is the client's when a
rule knows the failure as one request's (a warning rule) and the server answered later requests
with success; without a later success, or with a failure after it, it stays a failure."""

from __future__ import annotations

import pytest

from tracelens.engine import diagnose

FAILED_REQUEST = [
    'INFO:     10.0.0.2:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
    "ERROR:    Exception in ASGI application",
    "Traceback (most recent call last):",
    '  File "/srv/venv/lib/python3.12/site-packages/vllm/multimodal/utils.py", line 227, in fetch_image_async',
    "    image = await self.load_from_url_async(",
    '  File "/srv/venv/lib/python3.12/site-packages/vllm/connections.py", line 97, in async_get_bytes',
    "    r.raise_for_status()",
    "aiohttp.client_exceptions.ClientResponseError: 404, message='Not Found', url='https://img.example.com/a.jpg'",
]
OK = 'INFO:     10.0.0.2:5001 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
PROBE = 'INFO:     10.0.0.9:6001 - "GET /health HTTP/1.1" 200 OK'
CRASH = [
    "Traceback (most recent call last):",
    '  File "/srv/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 700, in run_engine_core',
    "    engine_core.run_busy_loop()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free.",
]


@pytest.mark.parametrize(
    ("after", "severity"),
    [
        ([OK], "warning"),  # served on: the request failed, the server did not
        ([], "error"),  # nothing answered after it
        ([OK, *CRASH], "error"),  # a later failure: the server did not live on
        ([PROBE], "error"),  # an answered health check is no request served
    ],
    ids=["served-on", "nothing-after", "crash-after", "probe-only"],
)
def test_a_request_a_warning_rule_knows_stays_a_warning_when_later_requests_succeed(
    after, severity
):
    diags = diagnose("\n".join([*FAILED_REQUEST, *after])).diagnoses
    fetch = [d for d in diags if d.rule_id == "vllm/serving/media-url-fetch-failed"]
    assert fetch, [d.rule_id for d in diags]
    assert fetch[0].severity == severity


HANDLED = [
    '(APIServer pid=1) INFO:     10.0.0.2:5002 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830] Traceback (most recent call last):",
    '(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830]   File "/srv/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/parser/harmony_utils.py", line 497, in parse_output_into_messages',
    "(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830]     parser.process(token_id)",
    '(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830]   File "/srv/venv/lib/python3.12/site-packages/openai_harmony/__init__.py", line 637, in process',
    "(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830]     self._inner.process(token)",
    '(APIServer pid=1) ERROR 08-12 09:14:03 [serving.py:830] openai_harmony.HarmonyError: unexpected tokens remaining in message header: Some("to=functions.lookup")',
]
ANSWERED_500 = '(APIServer pid=1) INFO:     10.0.0.2:5003 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error'
ANSWERED_400 = '(APIServer pid=1) INFO:     10.0.0.2:5003 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request'
LATER_OK = '(APIServer pid=1) INFO:     10.0.0.2:5004 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
THROUGHPUT = "(APIServer pid=1) INFO 08-12 09:14:11 [loggers.py:236] Engine 000: Avg prompt throughput: 1204.7 tokens/s, Avg generation throughput: 110.8 tokens/s, Running: 2 reqs, Waiting: 0 reqs"


@pytest.mark.parametrize(
    ("answer", "severity"),
    [
        (ANSWERED_500, "error"),  # the server failed that request, whatever it did after
        (ANSWERED_400, "warning"),  # a refusal: handled
        (None, "warning"),  # no answer line: carried on, handled
    ],
    ids=["5xx", "4xx", "no-answer"],
)
def test_a_rules_error_the_handler_answered_with_a_5xx_stays_an_error(answer, severity):
    """A handler that logged the traceback itself and answered the request with a server error
    failed that request, even though the server answered later ones: an error rule that knows
    the failure keeps its severity (an unrecognized one is not told apart from a client's bad
    request, and is downgraded as before)."""
    lines = [*HANDLED, *([answer] if answer else []), LATER_OK, THROUGHPUT, LATER_OK]
    diags = diagnose("\n".join(lines)).diagnoses
    harmony = [d for d in diags if d.rule_id == "vllm/serving/harmony-parser-unexpected-token"]
    assert harmony, [d.rule_id for d in diags]
    assert harmony[0].severity == severity
    assert ("answered with a server error" in " ".join(harmony[0].notes)) == (severity == "error")
