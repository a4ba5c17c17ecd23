"""Secrets and user content out of anything stored or exported.

Every kind is replaced with a marker ``[REDACTED:<kind>]``. Users add their own patterns
(``--redact-regex``); ``--no-redact`` is the explicit way out.

The token formats follow the rule sets of well-known secret scanners, so that a kind they
know is a kind tracelens knows: gitleaks (``config/gitleaks.toml``: ``github-fine-grained-pat``,
``slack-*-token``, ``gcp-api-key``, ``jwt``, ``aws-access-token``, ``private-key``,
``generic-api-key``) and Yelp's detect-secrets (``detect_secrets/plugins``: ``azure_storage_key``,
``basic_auth``, ``jwt``, ``keyword``, ``private_key``, ``slack``). Each pattern below names the
rule it follows.

>>> redact("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12")
'export HF_TOKEN=[REDACTED:hf-token]'
>>> redact("git clone https://bob:s3cret@git.example.org/x.git")
'git clone https://bob:[REDACTED:password]@git.example.org/x.git'
>>> redact("vllm serve m --api-key abc123secret --port 8000")
'vllm serve m --api-key [REDACTED:cli-secret] --port 8000'
"""

from __future__ import annotations

import copy
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any
from urllib.parse import quote, quote_plus

import re2

from tracelens.parse.normalize import normalize
from tracelens.parse.usercontent import ALL_USER_CONTENT_PATTERNS, MARK, substitute
from tracelens.pyregex import compile_re
from tracelens.regex import compile_regex


@dataclass(frozen=True)
class Pattern:
    kind: str
    regex: Any
    """An RE2 regex: linear time, so no log line can make redaction hang."""
    group: int = 0
    """Which group is the secret (0: the whole match)."""
    source: str = ""
    """The regex as written (joined into the combined pre-check)."""


def _p(kind: str, rx: str, group: int = 0) -> Pattern:
    return Pattern(kind, compile_regex(rx), group, rx)


_VALUE = r"""([^\s"',;\[][^\s"',;]{3,})"""
"""A credential value after its name: not already a marker, at least four characters."""
_QUOTED_OR_LIST = r"""(\[[^\]]*\]|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_SECRET_WORDS = r"password|passwd|passphrase|api[_-]?key|apikey|access[_-]?key|account[_-]?key|secret|credentials?"
_TOKEN_PREFIX = r"session|security|hub|hf|api|auth|access|refresh|id|bot|github|gh|gitlab|slack|bearer|private|client|oauth|personal|wandb|npm|pypi"

PATTERNS: tuple[Pattern, ...] = (
    # gitleaks private-key / detect-secrets PrivateKeyDetector, PGP blocks included
    _p(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    ),
    # the body of a key whose BEGIN or END line is elsewhere: a line of base64 and nothing else
    _p("private-key", r"(?m)^((?:\d+: )?)([A-Za-z0-9+/]{40,}={0,2})\s*$", 2),
    _p("hf-token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    _p("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    _p("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}"),
    # gitleaks aws-access-token
    _p("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b"),
    _p(
        "aws-secret",
        r"(?i)(aws_secret_access_key|secret_access_key)([\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9/+=]{40})",
        3,
    ),
    # gitleaks github-pat / github-oauth / github-app-token / github-fine-grained-pat
    _p("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    _p("github-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    # gitleaks slack-bot-token / slack-user-token / slack-legacy-* ; detect-secrets SlackDetector
    _p("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    # gitleaks gcp-api-key
    _p("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    # gitleaks jwt ; detect-secrets JwtTokenDetector (header.payload.signature, base64url)
    _p("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
    # an Authorization header with any scheme (Token, Digest, ApiKey ...) or none
    _p(
        "authorization",
        r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z-]+\s+)?)" + _VALUE,
        2,
    ),
    _p("bearer", r"(?i)(\bBearer\s+)([A-Za-z0-9._~+/=-]{8,})", 2),
    _p("basic-auth", r"(?i)(\bBasic\s+)([A-Za-z0-9+/]{8,}={0,2})", 2),
    # detect-secrets BasicAuthDetector: scheme://user:password@host, the user may be empty
    # (redis://:password@host)
    _p("password", r"\b([a-z][a-z0-9+.-]*://[^\s:/@]*:)([^\s@/]+)(@)", 2),
    _p("cookie", r"(?i)(\b(?:set-)?cookie[\"']?\s*[:=]\s*)([^\r\n]+)", 2),
    # credentials in a URL's query (presigned and webhook URLs)
    _p(
        "url-token",
        r"(?i)([?&](?:token|access_token|id_token|refresh_token|api_key|apikey|key|sig|signature|auth|password|secret"
        r"|code|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature)=)([^&\s#\"']+)",
        2,
    ),
    # detect-secrets AzureStorageKeyDetector: AccountKey=... ; SAS keys
    _p(
        "azure-key",
        r"(?i)(\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)([^;\s\"']+)",
        2,
    ),
    # flags that take a secret: --api-key VALUE, --hf-token=VALUE ...
    _p(
        "cli-secret",
        r"(?i)(--(?:api-key|hf-token|token|api-token|access-token|auth-token|hub-token|password|secret|secret-key"
        r"|ssl-keyfile-password|admin-api-key)(?:=|\s+)[\"']?)([^\s\"']+)",
        2,
    ),
    # Python reprs of settings: vLLM's "non-default args: {'api_key': ['...'], ...}"
    _p(
        "secret",
        r"(?i)([\"'](?:api_key|api_keys|hf_token|token|password|secret|secret_key|access_token|auth_token"
        r"|ssl_keyfile_password|admin_api_key)[\"']\s*:\s*)" + _QUOTED_OR_LIST,
        2,
    ),
    # variables holding a token: AWS_SESSION_TOKEN, HUGGING_FACE_HUB_TOKEN, GITHUB_TOKEN ...
    _p(
        "token",
        r"(?i)\b([\w-]*(?:"
        + _TOKEN_PREFIX
        + r")[_-]?token)([\"']?\s*[=:]\s*[\"']?)([^\s\"',;\[][^\s\"',;]{3,})",
        3,
    ),
    # gitleaks generic-api-key / detect-secrets KeywordDetector
    _p(
        "secret",
        r"(?i)\b((?:[\w-]*(?:"
        + _SECRET_WORDS
        + r"|access[_-]?token|auth[_-]?token)[\w-]*)[\"']?\s*[=:]\s*[\"']?)"
        + _VALUE,
        2,
    ),
    *(Pattern(kind, compile_regex(rx), group, rx) for kind, rx, group in ALL_USER_CONTENT_PATTERNS),
)

_PROBES = ("", "a", "Z", "0", " ", "-", "INFO 01-20 13:03:41 [engine.py:41] engine started")
"""Texts a user's pattern must not match whole: a pattern that does would shred every field."""


_WHOLE_TEXT_ANCHOR = compile_re(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
"""``\\A``, ``\\z`` or a group that turns multi-line mode off: the pattern cannot be run over
many texts joined by line breaks."""


def _combined(patterns: Iterable[Pattern]) -> Any:
    """One regex that matches wherever any of the patterns could: a text it does not match
    is returned as it is after a single linear scan. ``^`` and ``$`` match at every line
    break (multi-line mode), so that it serves texts joined by line breaks too
    (:meth:`Redactor.many`); for one text that only adds places where it may match, and a
    text it matches is redacted pattern by pattern."""
    return compile_regex("(?m)" + "|".join(f"(?:{p.source})" for p in patterns))


_SET_OPTIONS = re2.Options()
_SET_OPTIONS.log_errors = False
_SET_OPTIONS.max_mem = 64 << 20


def _pattern_set(patterns: list[Pattern]) -> Any:
    """An RE2 set of the patterns: one scan says which of them match a text, so that a text
    the pre-check flags is replaced only by those (``None`` when RE2 cannot build it: then
    every pattern runs). Built once for each list of patterns (a compiled set is only read)."""
    return _set_of(tuple(p.source for p in patterns))


@lru_cache(maxsize=8)
def _set_of(sources: tuple[str, ...]) -> Any:
    which = re2.Set.SearchSet(_SET_OPTIONS)
    try:
        for source in sources:
            which.Add(source)
        which.Compile()
    except re2.error:
        return None
    return which


def _sub(pattern: Pattern, text: str) -> str:
    return substitute(pattern.kind, pattern.regex, pattern.group, text)


def _encodable(text: str) -> str:
    """Text RE2 can read: lone surrogates (bytes that were not UTF-8) become escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_user_pattern(rx: str) -> Any:
    """A ``--redact-regex``: compiled, or ValueError when it is empty or would match anything."""
    if not rx.strip():
        raise ValueError("--redact-regex: an empty pattern would redact everything")
    try:
        regex = compile_regex(rx)
    except ValueError as exc:
        raise ValueError(f"--redact-regex: {exc}") from None
    for probe in _PROBES:
        m = regex.search(probe)
        if m is not None and (m.group(0) == probe or probe == ""):
            raise ValueError(
                f"--redact-regex: {rx!r} matches {probe!r}: it would redact every field"
            )
    return regex


class Redactor:
    """The built-in patterns plus a user's own regexes."""

    def __init__(self, extra: Iterable[str] = (), enabled: bool = True):
        self.enabled = enabled
        self.patterns = list(PATTERNS)
        for k, rx in enumerate(extra):
            self.patterns.append(Pattern(f"custom-{k + 1}", check_user_pattern(rx), 0, rx))
        self.precheck = _combined(self.patterns)
        self.which = _pattern_set(self.patterns)
        self.joinable = not any(_WHOLE_TEXT_ANCHOR.search(p.source) for p in self.patterns)
        """The pre-check can run over texts joined by line breaks: no pattern anchors at the
        start or end of the whole text."""
        self._forms: list[tuple[str, str]] = []
        """(text, marker) of secrets learned from a report's sources, longest first."""
        self._clean: set[str] | None = None
        """Texts the pre-check finds nothing in, noted by a learned copy (:meth:`learned`) as
        it scans them: a report's text recurs in its evidence, excerpt, tracebacks and lines,
        and a text noted here is not scanned again."""

    def learned(self, sources: Iterable[str]) -> Redactor:
        """A copy that also removes the secrets found in ``sources`` (the full text a report
        was made from) wherever they reappear in a form no pattern recognises: cut short by
        an ellipsis, URL-encoded in a search link, or with its digits normalized away."""
        child = copy.copy(self)
        if not self.enabled:
            return child
        child._clean = set() if self.joinable else None
        forms = dict(self._forms)
        texts = [_encodable(text) for text in sources if text]
        flagged = child._flagged(texts)
        for k in sorted(flagged) if flagged is not None else range(len(texts)):
            text = texts[k]
            matching = self._matching(text)
            for i, pattern in enumerate(self.patterns):
                if matching is not None and i not in matching:
                    continue  # finds nothing in this text
                for m in pattern.regex.finditer(text):
                    secret = m.group(pattern.group)
                    if len(secret) < 6 or secret.startswith("[REDACTED:"):
                        continue
                    mark = MARK.format(pattern.kind)
                    for form in {secret, normalize(secret)}:
                        for shown in (form, quote_plus(form), quote(form, safe="")):
                            if sum(c.isalnum() for c in shown.replace("<n>", "")) >= 6:
                                forms.setdefault(shown, mark)
        child._forms = sorted(forms.items(), key=lambda kv: -len(kv[0]))
        return child

    def _scrub_learned(self, text: str) -> str:
        for form, mark in self._forms:
            if form in text:
                text = text.replace(form, mark)
        if "…" in text:  # a secret cut short by an ellipsis: its beginning is gone too
            words = text.split(" ")
            for k, word in enumerate(words):
                if "…" in word:
                    words[k] = self._cut_prefix(word)
            text = " ".join(words)
        return text

    def _cut_prefix(self, word: str) -> str:
        head, _, tail = word.partition("…")
        for start in range(len(head) - 4):
            piece = head[start:]
            for form, mark in self._forms:
                if form.startswith(piece):
                    return head[:start] + mark + "…" + tail
        return word

    def _flagged(self, texts: list[str]) -> set[int] | None:
        """The indexes of the texts the pre-check matches (and maybe a few more: a match that
        crosses texts flags every text it touches), from one scan over them all joined by line
        breaks; ``None`` when they cannot be joined (a text with lone surrogates). Texts noted
        clean are left out of the scan, and the texts it does not flag are noted clean (a text
        the pre-check matches on its own is flagged, see :meth:`many`)."""
        clean = self._clean
        if clean:
            todo = [k for k, t in enumerate(texts) if t not in clean]
            if len(todo) < len(texts):
                hits = self._flagged([texts[k] for k in todo])
                return None if hits is None else {todo[i] for i in hits}
        hits = self._scan(texts)
        if clean is not None and hits is not None:
            # a text RE2 cannot read as it is (lone surrogates) is escaped before redaction:
            # only texts scanned as they are count as clean
            joined = self.joinable and len(texts) >= 2  # then every text was readable
            clean.update(
                t for k, t in enumerate(texts) if k not in hits and (joined or _encodable(t) is t)
            )
        return hits

    def _scan(self, texts: list[str]) -> set[int] | None:
        if not self.joinable or len(texts) < 2:
            return {k for k, t in enumerate(texts) if self.precheck.search(_encodable(t))}
        joined = "\n".join(texts)
        try:
            joined.encode("utf-8")
        except UnicodeEncodeError:
            return None
        hits: set[int] = set()
        ends = list(accumulate(len(t) + 1 for t in texts))  # offset just past each text's break
        for m in self.precheck.finditer(joined):
            start, end = m.span()
            first = bisect_right(ends, start)
            last = bisect_right(ends, max(start, end - 1))
            hits.update(range(first, last + 1))
        return hits

    def many(self, texts: list[str]) -> list[str]:
        """Each text as :meth:`__call__` returns it, with one pre-check scan over all of them
        joined by line breaks instead of one scan (and one call into RE2) per text: only the
        texts a pre-check match touches are redacted one by one.

        Exact because the pre-check has ``^``/``$`` match at every line break (each text
        starts a line), RE2 has no lookaround, and a match that crosses texts marks
        every text it touches; a match inside one text alone is also a match, at the same
        place, of the joined text or lies within a match found there."""
        if not self.enabled or len(texts) < 2 or not self.joinable:
            return [self(t) for t in texts]
        hits = self._flagged(texts)
        if hits is None:  # a text with lone surrogates: escaped one by one
            return [self(t) for t in texts]
        out = []
        for k, text in enumerate(texts):
            if k in hits:
                out.append(self(text))
            elif self._forms and text:
                out.append(self._scrub_learned(text))
            else:
                out.append(text)
        return out

    def _matching(self, text: str) -> set[int] | None:
        """The indexes of the patterns that match ``text``; ``None`` when the set cannot
        tell (it could not be built, or ran out of memory on this text)."""
        found = self.which.Match(text) if self.which is not None else None
        if found:
            return set(found)
        return set() if self.precheck.search(text) is None else None

    def _replaced(self, text: str) -> str:
        """Every pattern replaced in turn, as ``for p in patterns: text = sub(p, text)``, but
        only the patterns the set finds in the text are run; after a replacement changed the
        text, the set looks again at the new text for the patterns that follow."""
        matching = self._matching(text)
        for k, pattern in enumerate(self.patterns):
            if matching is None or k in matching:
                new = _sub(pattern, text)
                if new != text:
                    text = new
                    matching = self._matching(text)
        return text

    def __call__(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        if self._clean is not None and text in self._clean:
            return self._scrub_learned(text) if self._forms else text
        return self._redacted(text)

    def joined(self, texts: list[str]) -> str:
        """The texts joined by line breaks, redacted as one text (``self`` of it); when the
        pre-check finds nothing in it, the texts are noted clean (each one alone is a run of
        lines of it, so it finds nothing in them either: the argument of :meth:`many`)."""
        whole = "\n".join(texts)
        if self._clean is None or not self.enabled or not whole or whole in self._clean:
            return self(whole)
        return self._redacted(whole, texts)

    def _redacted(self, text: str, parts: list[str] | None = None) -> str:
        """``text`` with the pre-check's secrets and the learned ones replaced; ``parts``: the
        texts ``text`` joins, noted clean when the pre-check finds nothing in it as it is."""
        readable = _encodable(text)
        if self.precheck.search(readable) is not None:
            readable = self._replaced(readable)
        elif parts is not None and self._clean is not None and readable is text:
            self._clean.update(parts)
        if self._forms:
            readable = self._scrub_learned(readable)
        return readable


def redact(text: str, extra: Iterable[str] = ()) -> str:
    return Redactor(extra)(text)
