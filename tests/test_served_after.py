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
