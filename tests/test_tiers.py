"""The quick tier's sample of a table (tests/tiers.py): small tables whole, large ones one in
SAMPLE spread over the table, everything under --full."""

from __future__ import annotations

import tiers


def test_a_small_table_is_checked_whole(monkeypatch):
    monkeypatch.setattr(tiers, "FULL", False)
    assert tiers.sample(range(tiers.SMALL)) == list(range(tiers.SMALL))


def test_a_large_table_keeps_one_in_sample_from_its_start_to_its_end(monkeypatch):
    monkeypatch.setattr(tiers, "FULL", False)
    table = list(range(1000))
    got = tiers.sample(table)
    assert got[0] == 0 and got[-1] > 1000 - tiers.SAMPLE - 1
    assert len(got) == -(-1000 // tiers.SAMPLE)
    assert all(b - a == tiers.SAMPLE for a, b in zip(got, got[1:]))


def test_the_full_suite_keeps_everything(monkeypatch):
    monkeypatch.setattr(tiers, "FULL", True)
    assert tiers.sample(iter(range(1000))) == list(range(1000))


def test_property_tests_run_a_fifth_of_their_examples_quick_and_all_in_full(monkeypatch):
    monkeypatch.setattr(tiers, "FULL", False)
    assert [tiers.examples(n) for n in (500, 150, 60, 20)] == [100, 30, 12, 10]
    monkeypatch.setattr(tiers, "FULL", True)
    assert [tiers.examples(n) for n in (500, 150, 60, 20)] == [500, 150, 60, 20]
