"""Fuzzing over mutations of the corpus logs (tests/mutations.py: byte flips, cuts, duplicated
lines, envelope prefixes, bare-CR line ends, spliced logs): no input raises, each is done
within a generous guard, and every output format renders it. A short run here; the long
one is benchmarks/fuzz_corpus.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import MUTATIONS, mutant
from tiers import examples
from worklimit import guard

from tracelens.engine import diagnose
from tracelens.render.jsonout import render_json
from tracelens.render.markdown import render_markdown
from tracelens.render.text import render_text

FUZZ = settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=4))
def test_mutated_corpus_logs_never_raise_or_hang(rnd, steps):
    _log, _applied, data = mutant(rnd, steps)
    with guard():  # a corpus log takes well under a second; a quadratic stage takes minutes
        rep = diagnose(data)
        out = json.loads(render_json(rep))
        render_text(rep, full=True)
        render_markdown(rep)
    assert isinstance(out["diagnoses"], list)
    lines = {r.line for r in rep.document.records}
    for d in rep.diagnoses:
        assert {e.line for e in d.evidence} <= lines


@pytest.mark.slow  # every mutation over many logs: the mixed mutations above are quick
@FUZZ
@given(st.sampled_from(sorted(MUTATIONS)), st.randoms(use_true_random=False))
def test_each_mutation_alone(op, rnd):
    _log, _applied, data = mutant(rnd, 0)
    with guard():
        rep = diagnose(MUTATIONS[op](data, rnd))
    assert isinstance(rep.diagnoses, list)
