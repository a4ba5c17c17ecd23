"""The not-a-log check's shortcut for plain ASCII samples answers as the decoded sample's
regex count does (tables of cases)."""

from __future__ import annotations

import pytest

from tracelens.fleet import sniff
from tracelens.fleet.sniff import _BAD, HEAD, SAMPLE, not_a_log


def test_fast_set_is_the_regex() -> None:
    differ = [
        byte
        for byte in range(128)
        if (byte in sniff._TEXT_ASCII) is not (_BAD.match(chr(byte)) is None)
    ]
    assert differ == []


def _plain(head: bytes, size: int) -> str | None:
    """``not_a_log`` with the sample always decoded and counted."""
    saved = sniff._TEXT_ASCII
    sniff._TEXT_ASCII = b""  # nothing is deleted: every sample goes the plain way
    try:
        return not_a_log(head, size)
    finally:
        sniff._TEXT_ASCII = saved


HEADS = [
    b"INFO 09-11 06:20:31 [__init__.py:241] started\n",
    b"torch==2.5.1\nvllm>=0.6\n",
    b"\x00\x01\x02\x03" * 40,  # binary
    b"text " * 10 + b"\x00" * 30,  # a little binary in text: over a tenth
    b"text " * 100 + b"\x07",  # one bell: under a tenth
    "caf\u00e9 ERROR x\n".encode() * 20,  # not ASCII: the plain way
    b"\xef\xbb\xbfINFO with a BOM\n",
    "\ufeffINFO".encode("utf-16-le"),
    b"\xff\xfe\xfd" * 10,  # undecodable
    b"\x1b[31mERROR\x1b[0m red\n",
    b"   \n\t\n",
    b"x" * (SAMPLE + 10) + b"\x00" * 10,  # binary only after the sample
]


@pytest.mark.parametrize("head", HEADS)
def test_not_a_log_is_the_plain_check(head: bytes) -> None:
    for size in (len(head), HEAD + 1):
        assert not_a_log(head, size) == _plain(head, size)
