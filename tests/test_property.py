"""Arbitrary bytes and arbitrary cuts of corpus logs never raise and keep line numbers right."""

from __future__ import annotations

from corpus_expect import corpus_logs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from tracelens.engine import diagnose, parse
from tracelens.read.logread import records_from_bytes

LOGS = corpus_logs()  # each read when an example picks it
SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _expected_line_numbers(data: bytes) -> set[int]:
    # lines end with "\n"; in data without any "\n", a bare "\r" ends them
    nl = b"\r" if b"\r" in data and b"\n" not in data else b"\n"
    n = data.count(nl) + (0 if data.endswith(nl) or not data else 1)
    return set(range(1, n + 1))


@SETTINGS
@given(st.binary(max_size=4000))
def test_arbitrary_bytes_never_raise(data):
    rep = diagnose(data)
    assert isinstance(rep.diagnoses, list)


@SETTINGS
@given(
    st.text(
        alphabet=st.sampled_from(list('\n\r \t"|+^~:()[]=Traceback File line in Error 0123')),
        max_size=2000,
    )
)
def test_traceback_like_noise_never_raises(text):
    doc = parse(text)
    for tb in doc.tracebacks:
        assert tb.start_line <= tb.end_line


@SETTINGS
@given(st.sampled_from(range(len(LOGS))), st.integers(min_value=0), st.integers(min_value=0))
def test_cuts_of_corpus_logs(k, a, b):
    data = LOGS[k].read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return  # a UTF-16 log cut at an odd byte is another encoding's problem
    a, b = sorted((a % (len(data) + 1), b % (len(data) + 1)))
    cut = data[a:b]
    rep = diagnose(cut)
    lines = {r.line for r in rep.document.records}
    assert lines <= _expected_line_numbers(cut) or not cut
    for d in rep.diagnoses:
        for e in d.evidence:
            assert e.line in lines


@SETTINGS
@given(st.binary(max_size=3000))
def test_records_keep_line_numbers(data):
    recs = records_from_bytes(data)
    nums = [r.line for r in recs]
    assert nums == sorted(nums)
    if data and not data.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        assert set(nums) <= _expected_line_numbers(data)
