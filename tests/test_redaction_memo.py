"""A learned redactor notes the texts its pre-check found clean and does not scan them again;
every answer stays what a redactor without the notes gives (tables of cases)."""

from __future__ import annotations

import pytest

from tracelens.incidents.logdoc import redacted_texts
from tracelens.incidents.redact import Redactor
from tracelens.models import Record

SOURCES = [
    "RuntimeError: CUDA error: out of memory",
    "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12",
    "INFO engine started",
]

# sequences of calls on one learned redactor: ("many", [texts]) / ("call", text) /
# ("joined", [texts]); each answer is compared with a redactor that keeps no notes
SEQUENCES = [
    (
        "clean lines seen again",
        [
            ("joined", ["INFO a", "INFO b", "WARNING c"]),
            ("many", ["INFO a", "WARNING c", "INFO d"]),
            ("call", "INFO b"),
        ],
    ),
    (
        "a secret learned, then quoted cut short",
        [
            ("joined", ["x", "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF12"]),
            ("many", ["token hf_abcdefghijklmnopq…", "x"]),
            ("call", "hf_abcdefghijklmnopqrstuvwxyzABCDEF12 again"),
        ],
    ),
    (
        "a match across two lines of a chunk: neither line is noted clean",
        [
            ("joined", ["Authorization: Bearer", "abcdefgh12345678"]),
            ("call", "Authorization: Bearer"),
            ("call", "abcdefgh12345678"),
            ("many", ["Authorization: Bearer", "abcdefgh12345678"]),
        ],
    ),
    (
        "lone surrogates are escaped, never noted clean",
        [
            ("many", ["bad \udcff byte", "INFO a"]),
            ("call", "bad \udcff byte"),
            ("joined", ["bad \udcff byte", "INFO a"]),
            ("call", "bad \udcff byte"),
            ("many", ["bad \udcff byte"]),
        ],
    ),
    (
        "a private key block across lines",
        [
            ("joined", ["-----BEGIN PRIVATE KEY-----", "MIIEvQ", "-----END PRIVATE KEY-----"]),
            ("many", ["MIIEvQ", "-----END PRIVATE KEY-----"]),
        ],
    ),
    (
        "user content and passwords in URLs",
        [
            ("many", ["prompt: 'hello'", "git clone https://bob:s3cret@git.example.org/x.git"]),
            ("joined", ["prompt: 'hello'", "fine"]),
            ("call", "fine"),
            ("call", "prompt: 'hello'"),
        ],
    ),
]


def _answers(redactor: Redactor, calls) -> list:
    out = []
    for kind, arg in calls:
        if kind == "many":
            out.append(redactor.many(list(arg)))
        elif kind == "call":
            out.append(redactor(arg))
        else:
            out.append(redactor.joined(list(arg)))
    return out


@pytest.mark.parametrize(("case", "calls"), SEQUENCES, ids=[c for c, _ in SEQUENCES])
def test_notes_change_no_answer(case: str, calls) -> None:
    noted = Redactor().learned(SOURCES)
    plain = Redactor().learned(SOURCES)
    plain._clean = None
    assert _answers(noted, calls) == _answers(plain, calls)


@pytest.mark.parametrize(
    ("texts", "clean"),
    [
        (["INFO a", "INFO b"], {"INFO a", "INFO b"}),
        (["INFO a", "api_key=abcdef123456"], set()),  # the chunk holds a match: nothing noted
        (["INFO a", "bad \udcff"], set()),  # escaped before the scan: nothing noted
    ],
)
def test_joined_notes_clean_lines(texts: list[str], clean: set[str]) -> None:
    redactor = Redactor().learned([])
    redactor.joined(texts)
    assert redactor._clean is not None
    assert redactor._clean & set(texts) == clean


@pytest.mark.parametrize(
    "lines",
    [
        ["INFO a", "Authorization: Bearer", "abcdefgh12345678", "INFO a"],
        ["-----BEGIN RSA PRIVATE KEY-----", "MIIEvQ", "-----END RSA PRIVATE KEY-----", "x"],
        [f"line {k}" for k in range(600)] + ["api_key=abcdef123456"],
    ],
)
def test_stored_lines_are_the_plain_ones(lines: list[str]) -> None:
    records = [Record(line=k + 1, text=t) for k, t in enumerate(lines)]
    plain = Redactor().learned(lines)
    plain._clean = None
    assert redacted_texts(records, Redactor().learned(lines)) == redacted_texts(records, plain)
