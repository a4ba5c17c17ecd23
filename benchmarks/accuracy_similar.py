"""How well similar-incident search tells the same failure from another, on pairs of real logs.

The labelled pairs are tests/data/similar_pairs.yaml (groups of logs of one failure, rebuilt
variants, every other corpus/incidents log as a failure of its own). Each log is diagnosed and
kept as the store keeps it (redacted signature); a pair's score is
``tracelens.incidents.similar.similarity`` of the first log's query against the second's
stored incident (a pair with the same fingerprint is the same incident: always shown). The
table gives, per threshold, the pairs of the same failure found (recall) and the share of
pairs shown that are the same failure (precision); the chosen threshold is the one with the
best F1 (their harmonic mean; on a tie, the higher threshold).

Then the ranking: a store of every log, every other one of the same failure hidden from the
answer; for each pair of the same failure, the second log's incident marked resolved and the
first log asked for: is its twin ranked first, and within what `diagnose` shows (the top 3
above the default threshold)?

    python benchmarks/accuracy_similar.py [--pairs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from similar_pairs import Seen, diagnosed, load, pair_score, pairs  # noqa: E402

from tracelens.incidents.incident import save  # noqa: E402
from tracelens.incidents.redact import Redactor  # noqa: E402
from tracelens.incidents.similar import DEFAULT_MIN_SCORE, rank  # noqa: E402
from tracelens.incidents.store import Store  # noqa: E402

THRESHOLDS = [30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90]


def table(
    scored: list[tuple[float, str]],
) -> list[tuple[int, int, int, int, float, float, float]]:
    positives = sum(1 for _, lab in scored if lab == "same")
    rows = []
    for t in THRESHOLDS:
        tp = sum(1 for s, lab in scored if s >= t and lab == "same")
        fp = sum(1 for s, lab in scored if s >= t and lab == "different")
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / positives if positives else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append((t, tp, fp, positives - tp, precision, recall, f1))
    return rows


def ranking(seen: list[Seen], shown: int = 3) -> tuple[int, int, int, list[str]]:
    """(pairs, twin first, twin shown by diagnose, misses)."""
    first = within = total = 0
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "all.db")
        ids: dict[str, int] = {}
        for s in seen:
            rec = save(store, s.report, Redactor(), s.item.name)
            assert rec is not None
            ids[s.item.name] = rec.incident_id
        by_group: dict[str, list[Seen]] = {}
        for s in seen:
            by_group.setdefault(s.item.group, []).append(s)
        for group in by_group.values():
            for a in group:
                for b in group:
                    if a is b:
                        continue
                    total += 1
                    twin = ids[b.item.name]
                    hidden = {ids[o.item.name] for o in group} - {twin}
                    store.db.execute(
                        "UPDATE incidents SET status = 'resolved' WHERE id = ?", [twin]
                    )
                    hits = [
                        h
                        for h in rank(store, a.query, limit=len(seen), min_score=0)
                        if h.id not in hidden
                    ]
                    store.db.execute("UPDATE incidents SET status = 'open' WHERE id = ?", [twin])
                    pos = next((k for k, h in enumerate(hits) if h.id == twin), None)
                    if pos == 0:
                        first += 1
                    if pos is not None and pos < shown and hits[pos].score >= DEFAULT_MIN_SCORE:
                        within += 1
                    else:
                        top = hits[0] if hits else None
                        misses.append(
                            f"{a.item.name} -> {b.item.name}: "
                            + (
                                f"rank {pos + 1}, score {hits[pos].score}"
                                if pos is not None
                                else "not a candidate"
                            )
                            + (f"; first: {top.title[:60]!r} {top.score}" if top else "")
                        )
        store.close()
    return total, first, within, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", action="store_true", help="print every labelled pair's score")
    args = ap.parse_args()
    items = load()
    seen, notes = diagnosed(items)
    by_name = {s.item.name: s for s in seen}
    scored: list[tuple[float, str]] = []
    listing: list[tuple[float, str, str, str]] = []
    for a, b, lab in pairs(items):
        if a.name not in by_name or b.name not in by_name:
            continue
        s = pair_score(by_name[a.name], by_name[b.name])
        scored.append((s, lab))
        if args.pairs or (lab != "related" and (lab == "same") != (s >= DEFAULT_MIN_SCORE)):
            listing.append((s, lab, a.name, b.name))
    counts = Counter(lab for _, lab in scored)
    groups = len({s.item.group for s in seen if s.item.group != s.item.name})
    print(
        f"{len(seen)} logs ({groups} failures seen in several logs), pairs: "
        f"{counts['same']} same failure, {counts['different']} different, "
        f"{counts['related']} related (left out)"
    )
    for n in notes:
        print("  note:", n)
    print()
    print("| threshold | same found | different shown | same missed | precision | recall | F1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    rows = table(scored)
    for t, tp, fp, fn, p, r, f1 in rows:
        mark = " (default)" if t == DEFAULT_MIN_SCORE else ""
        print(f"| {t}{mark} | {tp} | {fp} | {fn} | {p:.3f} | {r:.3f} | {f1:.3f} |")
    chosen = max(rows, key=lambda row: (row[6], row[0]))[0]
    print(f"\nthreshold with the best F1: {chosen}")
    print(f"default (tracelens.incidents.similar.DEFAULT_MIN_SCORE): {DEFAULT_MIN_SCORE:g}")
    if listing:
        print("\npairs on the wrong side of the default:" if not args.pairs else "\npairs:")
        for s, lab, a, b in sorted(listing, key=lambda t: (t[1], -t[0])):
            print(f"  {s:5.1f}  {lab:9s} {a}  ~  {b}")
    total, first, within, misses = ranking(seen)
    print(
        f"\nranking, twin resolved, the others open: {first}/{total} twins ranked first, "
        f"{within}/{total} shown by diagnose (top 3, score >= {DEFAULT_MIN_SCORE:g})"
    )
    for m in misses:
        print("  miss:", m)


if __name__ == "__main__":
    main()
