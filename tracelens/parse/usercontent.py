"""What users typed, masked: request-logging lines quote the user's prompt and the model's
output, and error text quoted there is not what the software printed.

>>> without_user_content("Received request chatcmpl-1: prompt: 'why CUDA out of memory?'")
'Received request chatcmpl-1: prompt: [REDACTED:prompt]'
"""

from __future__ import annotations

from typing import Any

from tracelens.regex import compile_regex

MARK = "[REDACTED:{}]"

_QUOTED = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""

# (kind, regex, group holding the user's text): vLLM and SGLang request logging
USER_CONTENT_PATTERNS: tuple[tuple[str, str, int], ...] = (
    ("prompt", r"(\bprompt: )" + _QUOTED, 2),
    ("prompt", r"(\bprompt_token_ids: )(\[[^\]]*\])", 2),
    ("completion", r"(\b(?:output|outputs|text|generated_text): )" + _QUOTED, 2),
    ("prompt", r"(\bmessages=)(\[.*\])", 2),
)
# request objects printed with their fields (SGLang's GenerateReqInput(text='...'))
_FIELDS = ("prompt", r"(\b(?:text|messages|prompt)=)(" + _QUOTED[1:-1] + r"|\[.*\])", 2)
# JSON request bodies (OpenAI-compatible APIs): "prompt": "...", "content": "...", arrays too
_JSON_BODY = (
    "prompt",
    r'("(?:prompt|content|input|instructions|text|suffix|system)"\s*:\s*)("(?:[^"\\]|\\.)*"|\[[^\]]*\])',
    2,
)
ALL_USER_CONTENT_PATTERNS: tuple[tuple[str, str, int], ...] = (
    *USER_CONTENT_PATTERNS,
    _FIELDS,
    _JSON_BODY,
)
"""Everything a user typed or a model wrote, in every form a log prints it: what redaction
removes from stored and exported text."""
_ANY_USER_CONTENT = "|".join(rx for _kind, rx, _group in ALL_USER_CONTENT_PATTERNS)

_REQUEST_LOG = (
    "Received request",
    "prompt:",
    "Generated response",
    "GenerateReqInput",
    "ChatCompletionRequest",
)


def substitute(kind: str, regex: Any, group: int, text: str) -> str:
    """``text`` with each match's ``group`` (0: the whole match) replaced by a marker."""
    mark = MARK.format(kind)
    if group == 0:
        return regex.sub(mark, text)

    def repl(m: Any) -> str:
        start, end = m.span(group)
        return m.group(0)[: start - m.start()] + mark + m.group(0)[end - m.start() :]

    return regex.sub(repl, text)


def may_quote_user_content(text: str) -> bool:
    """Whether any line of ``text`` may be request logging (:func:`without_user_content`
    leaves every line of a text without it as it is).

    >>> may_quote_user_content("ERROR boom\\nINFO Received request chatcmpl-1"), may_quote_user_content("boom")
    (True, False)
    """
    return any(k in text for k in _REQUEST_LOG)


def without_user_content(text: str) -> str:
    """A request-logging line with the user's prompt and the model's output masked: what a
    user typed is not what the software printed, whatever error text it quotes."""
    if not any(k in text for k in _REQUEST_LOG):
        return text
    if compile_regex(_ANY_USER_CONTENT).search(text) is None:
        return text  # a request line holding no prompt or output: one search, not six
    for kind, rx, group in ALL_USER_CONTENT_PATTERNS:
        text = substitute(kind, compile_regex(rx), group, text)
    return text
