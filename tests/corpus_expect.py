"""Expected parses of the corpus logs: ``<log>.expect.yaml`` beside each log.

Write or refresh them (then read the diff before committing):

    python tests/corpus_expect.py corpus/shapes/*.log
    python tests/corpus_expect.py --promote    # unrecognized logs a rule now knows -> incidents

An expect file holds ``parse`` (what the reader must find), optionally ``facts`` (a subset
that must be read), ``top_rule`` (the rank-1 diagnosis a person expects; ``null`` when no
rule should claim the log) and, for a failure no rule knows, ``unrecognized`` (the line and
text of the originating failure the first diagnosis must quote, and the category a person
would give it). Refreshing rewrites ``parse`` from what tracelens reads now and
keeps ``facts`` and ``top_rule``; ``--top`` also recomputes ``top_rule``: review the diff.
"""

from __future__ import annotations

import copy
import functools
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"


def summarize(doc) -> dict:
    def tb(t) -> dict:
        exc = t.exception
        out = {
            "line": t.start_line,
            "end": t.end_line,
            "kind": t.kind,
            "type": exc.type if exc else None,
            "message": (exc.message.splitlines()[0][:100] if exc and exc.message else ""),
            "segments": len(t.segments),
            "frames": len(t.frames),
            "streams": len(t.streams),
            "truncated": t.truncated,
        }
        if exc and exc.nested:
            out["nested"] = [tb(n) for n in exc.nested]
        return out

    return {
        "lines": doc.line_count,
        "streams": len(doc.streams),
        "tracebacks": [tb(t) for t in doc.tracebacks],
        "errors": len(doc.errors),
    }


def corpus_logs() -> list[Path]:
    """Every corpus log, in path order; the folder is walked once per test process (four test
    modules read the list while they are collected)."""
    return list(_corpus_logs())


@functools.cache
def _corpus_logs() -> tuple[Path, ...]:
    # sorted by the parts, which is the paths' own order on POSIX, without Path.__lt__'s cost
    return tuple(sorted(CORPUS.rglob("*.log"), key=lambda p: p.parts))


def expect_path(log: Path) -> Path:
    return log.with_name(log.name[: -len(".log")] + ".expect.yaml")


# libyaml's parser where PyYAML was built with it: the same documents, read 8x faster (the
# expect files are read while the tests are collected, by every test process)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _expected(log: Path) -> dict:
    path = expect_path(log)
    return (yaml.load(path.read_text(), Loader=_LOADER) if path.exists() else None) or {}


def expected(log: Path) -> dict:
    """The log's expect file (empty when it has none), read once per test process; each call
    gets its own copy."""
    return copy.deepcopy(_expected(log))


def write(log: Path, update_top: bool = False) -> None:
    """Write ``parse`` from what tracelens reads now. ``top_rule`` is the expectation a person
    wrote: kept as it is, unless the file has none yet or ``update_top`` asks to recompute it."""
    from tracelens.engine import parse_path, report

    path = expect_path(log)
    old = (yaml.safe_load(path.read_text()) if path.exists() else None) or {}
    doc = parse_path(str(log))
    data = {"parse": summarize(doc)}
    data.update({k: v for k, v in old.items() if k not in ("parse", "top_rule")})
    if "top_rule" in old and not update_top:
        data["top_rule"] = old["top_rule"]
    elif "unrecognized" in old:
        data["top_rule"] = "unrecognized"
    else:
        rep = report(doc)
        data["top_rule"] = rep.diagnoses[0].rule_id if rep.diagnoses else None
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


def promote() -> None:
    """Move the logs of corpus/unrecognized that a rule now diagnoses at rank 1 (its evidence
    holding the expected line) to corpus/incidents, expecting that rule."""
    import subprocess

    from tracelens.engine import parse_path, report

    for log in sorted((CORPUS / "unrecognized").glob("*.log")):
        path = expect_path(log)
        data = yaml.safe_load(path.read_text()) or {}
        want = data.get("unrecognized") or {}
        diags = report(parse_path(str(log))).diagnoses
        if not diags or diags[0].rule_id == "unrecognized":
            continue
        first = diags[0]
        held = not first.secondary and any(
            e.line == want.get("line") for d in diags if not d.secondary for e in d.evidence
        )
        print(
            f"{log.name}: {first.rule_id} ({first.category}; expected {want.get('category')})"
            + ("" if held else f": evidence does not hold line {want.get('line')}, left in place")
        )
        if not held:
            continue
        data.pop("unrecognized", None)
        data["top_rule"] = first.rule_id
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
        for p in (log, path):
            subprocess.run(
                ["git", "mv", str(p), str(CORPUS / "incidents" / p.name)], check=True, cwd=ROOT
            )
    # incidents that expected an unrecognized failure and that a rule now diagnoses
    for log in corpus_logs():
        path = expect_path(log)
        data = yaml.safe_load(path.read_text()) or {}
        if data.get("top_rule") != "unrecognized" or "unrecognized" in data:
            continue
        diags = report(parse_path(str(log))).diagnoses
        if diags and diags[0].rule_id != "unrecognized" and not diags[0].secondary:
            print(f"{log.relative_to(CORPUS)}: now {diags[0].rule_id} ({diags[0].category})")
            path.write_text(
                path.read_text().replace("top_rule: unrecognized", f"top_rule: {diags[0].rule_id}")
            )


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--promote" in args:
        promote()
        sys.exit(0)
    update_top = "--top" in args
    args = [a for a in args if a != "--top"]
    for arg in args or [str(p) for p in corpus_logs()]:
        write(Path(arg), update_top)
        print("wrote", expect_path(Path(arg)))
