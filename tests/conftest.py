import gc
import os
import sys
from pathlib import Path

# No animations in the TUI tests. A Pilot key press waits for the animations it started (a
# tab's underline slides for a fraction of a second), so with them on most of a TUI test's
# wall time is waiting; the screens they end on are the same. Textual reads TEXTUAL_ANIMATIONS
# once, on import, and a pytest plugin (pytest-textual-snapshot) has imported it already: each
# App takes its animation level from textual.constants when it is made, so set it there too.
os.environ["TEXTUAL_ANIMATIONS"] = "none"
import textual.constants  # noqa: E402

textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402
import tiers  # noqa: E402


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="the whole suite: every corpus log and rule example, and the tests marked slow "
        f"(without it, one in {tiers.SAMPLE} of each and no slow test: tests/tiers.py)",
    )


def pytest_configure(config) -> None:
    tiers.FULL = bool(config.getoption("--full"))
    if config.getoption("--snapshot-update", default=False) and not tiers.FULL:
        # the quick tier draws only some of the pictures: syrupy would delete the others
        raise pytest.UsageError("--snapshot-update needs --full (every snapshot test)")
    if not tiers.FULL and hasattr(config.option, "warn_unused_snapshots"):
        # nor may the pictures it leaves out fail a serial quick run as "unused"
        config.option.warn_unused_snapshots = True
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        _warm_caches()


def _warm_caches() -> None:
    """Under xdist, the controller builds the shipped rules' index and the nearest-failure
    index once before the workers start: after a rule was edited (or on a fresh machine) each
    worker would otherwise build both itself (about 5.5 s of CPU each on two cores). The
    workers read the files from the same cache."""
    from tracelens.rulebook.load import default_rules
    from tracelens.rulebook.nearest import index

    index(default_rules())


# The suite keeps several hundred thousand long-lived objects (loaded rules, parsed logs, the
# collected tests), and Python's default pace of collection scans all of them every few
# thousand short-lived allocations: about a sixth of the suite's CPU. Fewer, larger young
# collections and rarer full ones; cycles are still collected.
_GC_THRESHOLDS = tuple(
    int(x) for x in os.environ.get("TRACELENS_TEST_GC", "10000,20,50").split(",")
)
gc.set_threshold(*_GC_THRESHOLDS)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session) -> None:
    # pytest looks for exceptions raised in finalizers at the end with five full collections;
    # one finds them (its hook still listening), the rest then scan nothing left over
    gc.collect()
    gc.freeze()


def pytest_report_header(config) -> str:
    if tiers.FULL:
        return "tracelens: the full suite"
    return (
        f"tracelens: the quick suite (one in {tiers.SAMPLE} corpus logs and rule examples, "
        "no slow tests); --full runs everything"
    )


# Under xdist (`pytest -n auto`, the README's and CI's command) whole files go to a worker
# (`--dist loadfile` in pyproject.toml): a module's fixtures, such as the similar-incident
# tests' store of every labelled log, are built by one worker, not by each worker that runs
# some of its tests. The files are handed out in the order below, longest first, so that no
# worker is left running one of them alone at the end (`--no-loadscope-reorder` keeps this
# order; xdist would otherwise start with the files of most tests). Seconds of wall time in a
# serial run (docs/testing.md); a file not named keeps its place after these.
LONGEST_FIRST = [
    "test_redaction.py",
    "test_tui_snapshots.py",
    "test_tui_log.py",
    "test_similar.py",
    "test_tui.py",
    "test_fleet_ray.py",
    "test_tui_screens.py",
    "test_tui_keys.py",
    "test_grammar_table.py",
    "test_environment_failures.py",
    "test_corpus.py",
    "test_markup.py",
    "test_pathological.py",
    "test_fast_paths.py",
    "test_tui_filter.py",
    "test_rules.py",
]


def pytest_collection_modifyitems(config, items) -> None:
    if not tiers.FULL and not config.getoption("markexpr"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    # sorted() is stable: a file's tests stay together and in their order
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)) if item.path else len(rank))
