"""Fingerprints: the same failure gets the same fingerprint across runs, machines and versions.

Two fingerprints per failure, each a hash of a clear text that is kept so a person can see why
two crashes were grouped:

- **coarse** (same bug): rule, exception type, the message's first line normalized (numbers,
  hex, paths, sizes, ids, timestamps), and the two innermost frames that belong to the
  application or the failing library, by function name only (line numbers move between
  versions);
- **fine** (same event): rule, type, the whole normalized message, five frames with modules,
  and the facts that identify the setup (versions, GPU, model).

Generic frames (``torch.nn`` call plumbing, multiprocessing, asyncio, threading, import
machinery, decorators) are skipped, in the spirit of crash-signature systems.

"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# SHA-256 from CPython's own module: hashlib loads OpenSSL first, which costs more than the
# similar search ``diagnose`` runs with an incident store (the same digest either way)
try:
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.10, 3.11
    except ImportError:
        from hashlib import sha256

from tracelens.models import Diagnosis, Document, ExceptionInfo, Frame, Traceback
from tracelens.parse.frames import is_plumbing
from tracelens.parse.lifecycle import teardown_only
from tracelens.parse.normalize import normalize


def significant(frames: list[Frame]) -> list[Frame]:
    """Frames worth fingerprinting, innermost first."""
    return [fr for fr in reversed(frames) if not is_plumbing(fr)]


@dataclass(frozen=True)
class Signature:
    """A failure's signatures: the coarse one groups incidents, the fine one occurrences."""

    coarse: str
    """Hash of :attr:`coarse_text` (groups incidents)."""
    fine: str
    coarse_text: str
    fine_text: str
    exception_type: str
    message: str


def _digest(text: str) -> str:
    return sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def primary_exception(
    doc: Document, diag: Diagnosis | None
) -> tuple[ExceptionInfo | None, Traceback | None]:
    """The exception a fingerprint is made of: the one the top diagnosis cites, else the first
    traceback's (the earliest failure is usually the cause)."""
    from tracelens.parse.document import iter_exceptions

    pairs = list(iter_exceptions(doc))
    if diag is not None:
        lines = {e.line for e in diag.evidence}
        for exc, tb in pairs:
            if exc.line in lines:
                return exc, tb
    for exc, tb in pairs:
        if tb is not None:
            return exc, tb
    return pairs[0] if pairs else (None, None)


_SETUP_FACTS = ("vllm_version", "sglang_version", "torch_version", "gpu_name", "model")


def signature(
    doc: Document, diag: Diagnosis | None, redact: Callable[[str], str] | None = None
) -> Signature | None:
    """Fingerprints of the log's primary failure; ``None`` for a log with no failure. With
    ``redact``, the clear texts kept beside the hashes are redacted.

    Without a diagnosis, tracebacks printed after someone asked the process to stop (Ctrl-C,
    SIGTERM, "shutdown triggered") are teardown noise, not a failure."""
    if diag is None and teardown_only(doc):
        return None
    exc, tb = primary_exception(doc, diag)
    if exc is None and diag is None:
        # no rule and no exception: only a known fatal line makes this a failure (an error-level
        # message alone is what healthy servers print about handled problems)
        fatal = [e for e in doc.errors if e.kind not in ("level", "exception")]
        if not fatal:
            return None
        etype, message = "", fatal[0].text
    else:
        etype = exc.type if exc else ""
        message = exc.message if exc else (diag.evidence[0].text if diag and diag.evidence else "")
    frames = significant(tb.frames) if tb is not None else []
    rule = diag.rule_id if diag else "-"
    facts = doc.fact_map()
    setup = ",".join(f"{k}={facts[k].value}" for k in _SETUP_FACTS if k in facts)

    def texts(msg: str, setup: str) -> tuple[str, str]:
        first_line = normalize(msg.splitlines()[0] if msg else "")[:200]
        coarse = " | ".join(
            [rule, etype, first_line, " > ".join(f.function or "?" for f in frames[:2])]
        )
        fine = " | ".join(
            [
                rule,
                etype,
                normalize(msg)[:1000],
                " > ".join(f"{f.module}:{f.function}" for f in frames[:5]),
                setup,
            ]
        )
        return coarse, fine

    coarse_text, fine_text = texts(message, setup)
    shown_coarse, shown_fine = coarse_text, fine_text
    if redact is not None:
        # the hashes stay those of the log's own text (the same crash groups the same way with
        # or without redaction); the texts kept beside them are redacted before they are cut
        shown_message, shown_setup = redact(message), redact(setup)
        if (shown_message, shown_setup) != (message, setup):
            shown_coarse, shown_fine = texts(shown_message, shown_setup)
        shown_coarse, shown_fine = redact(shown_coarse), redact(shown_fine)
    return Signature(
        coarse=_digest(coarse_text),
        fine=_digest(fine_text),
        coarse_text=shown_coarse,
        fine_text=shown_fine,
        exception_type=etype,
        message=message,
    )
