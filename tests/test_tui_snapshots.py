"""SVG snapshots of every screen at 80x24 (pytest-textual-snapshot). After an intended change
of the look: ``pytest --full tests/test_tui_snapshots.py --snapshot-update`` and review the SVGs.
The quick tier draws one picture of each kind of screen (the list, a diagnosis, the rules, a
dialog); the other sizes, tabs, keys and dialogs, a second each, are ``--full``'s."""

from __future__ import annotations

import pytest
from tiers import one_quick
from tui_fixtures import make_store, own_config, seed_report  # noqa: F401 (autouse)

from tracelens.tui import make_app

SIZE = (80, 24)
WIDE = (200, 50)
SIZES = [
    pytest.param(SIZE, id="80x24"),
    pytest.param(WIDE, id="200x50", marks=pytest.mark.slow),
]


@pytest.fixture()
def db(tmp_path):
    return make_store(tmp_path / "incidents.db")


@pytest.mark.parametrize("size", SIZES)
def test_incident_list(snap_compare, db, size):
    assert snap_compare(make_app(db_path=db), terminal_size=size)


@pytest.mark.slow
def test_incident_list_light_theme_filtered(snap_compare, db):
    assert snap_compare(
        make_app(db_path=db), terminal_size=SIZE, press=["ctrl+t", "slash", *"nccl"]
    )


@pytest.mark.parametrize("tab", one_quick(["1", "2", "3", "4", "5"]))
def test_diagnosis_tabs(snap_compare, tmp_path, tab):
    app = make_app(db_path=tmp_path / "none.db", report=seed_report())
    assert snap_compare(app, terminal_size=SIZE, press=[tab])


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_diagnosis_remedies_after_down(snap_compare, tmp_path, size):
    """At 80x24 Down first scrolls (the cause is long) to the first remedy, then moves to the next."""
    app = make_app(db_path=tmp_path / "none.db", report=seed_report())
    assert snap_compare(app, terminal_size=size, press=["down"] * 24)


# a fixed set of shipped rules, so adding a rule to the knowledge base does not change the picture
BROWSED_RULES = (
    "nccl/watchdog-timeout",
    "nccl/socket-connect-failed",
    "torch/gpu-oom",
    "vllm/attention/mla-fp8-kv-unsupported",
)


@pytest.mark.parametrize("size", SIZES)
def test_rules_browser(snap_compare, tmp_path, size, monkeypatch):
    """The rule pane lists each example by its path, below the fold: the rules are copied to a
    path relative to the working directory, so the length of the temporary directory (which
    differs by user, by run number and in a pytest-xdist worker) cannot change the wrapping of
    those lines and with it the scrollbar."""
    import shutil
    from pathlib import Path

    from tracelens.rulebook.load import load, shipped_rules_dir

    monkeypatch.chdir(tmp_path)
    root = Path("rules")
    for rule_id in BROWSED_RULES:
        for src in Path(shipped_rules_dir()).glob(f"{rule_id}.*"):
            dst = root / src.relative_to(shipped_rules_dir())
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    app = make_app(db_path=tmp_path / "none.db", rules=load([root], cache=False))
    assert snap_compare(app, terminal_size=size, press=["r", *"nccl"])


@pytest.mark.parametrize("key", one_quick(["n", "question_mark"]))
def test_dialogs_from_the_list(snap_compare, tmp_path, key):
    assert snap_compare(make_app(db_path=tmp_path / "none.db"), terminal_size=SIZE, press=[key])


@pytest.mark.parametrize("key", one_quick(["x", "a", "t"], keep=()))
def test_dialogs_from_an_incident(snap_compare, db, key, monkeypatch):
    monkeypatch.chdir("/")  # the export dialog shows the folder it writes to: the same everywhere
    assert snap_compare(make_app(db_path=db), terminal_size=SIZE, press=["enter", key])
