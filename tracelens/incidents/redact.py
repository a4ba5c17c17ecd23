"""Secrets and user content out of anything stored or exported.

Every kind is replaced with a marker ``[REDACTED:<kind>]``. Users add their own patterns
(``--redact-regex``); ``--no-redact`` is the explicit way out.

>>> redact("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12")
'export HF_TOKEN=[REDACTED:hf-token]'
>>> redact("git clone https://bob:s3cret@git.example.org/x.git")
'git clone https://bob:[REDACTED:password]@git.example.org/x.git'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tracelens.parse.usercontent import USER_CONTENT_PATTERNS, substitute
from tracelens.regex import compile_regex


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: Any
    """An RE2 regex: linear time, so no log line can make redaction hang."""
    group: int = 0
    """Which group is the secret (0: the whole match)."""


def _p(kind: str, rx: str, group: int = 0) -> Pattern:
    return Pattern(kind, compile_regex(rx), group)


PATTERNS: tuple[Pattern, ...] = (
    _p("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    _p("hf-token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    _p("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _p("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
    _p("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    _p("aws-secret", r"(?i)(aws_secret_access_key|secret_access_key)([\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})", 3),
    _p("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    _p("bearer", r"(?i)(\bBearer\s+)([A-Za-z0-9._~+/=-]{8,})", 2),
    _p("basic-auth", r"(?i)(\bBasic\s+)([A-Za-z0-9+/]{8,}={0,2})", 2),
    _p("password", r"\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)", 2),
    _p(
        "secret",
        r"(?i)\b((?:[\w-]*(?:password|passwd|api[_-]?key|access[_-]?token|auth[_-]?token|secret)[\w-]*)[\"']?\s*[=:]\s*[\"']?)([^\s\"',;]{4,})",
        2,
    ),
    *(Pattern(kind, compile_regex(rx), group) for kind, rx, group in USER_CONTENT_PATTERNS),
)


def _sub(pattern: Pattern, text: str) -> str:
    return substitute(pattern.kind, pattern.regex, pattern.group, text)


class Redactor:
    """The built-in patterns plus a user's own regexes."""

    def __init__(self, extra: Iterable[str] = (), enabled: bool = True):
        self.enabled = enabled
        self.patterns = list(PATTERNS)
        for k, rx in enumerate(extra):
            try:
                self.patterns.append(Pattern(f"custom-{k + 1}", compile_regex(rx)))
            except ValueError as exc:
                raise ValueError(f"--redact-regex: {exc}") from None

    def __call__(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        for pattern in self.patterns:
            text = _sub(pattern, text)
        return text


def redact(text: str, extra: Iterable[str] = ()) -> str:
    return Redactor(extra)(text)
