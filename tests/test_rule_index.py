"""The compiled rule index: a run checks it against the rules folders' stamps (one stat a
folder) and the stamps of the rules its prefilter picks; every change below is picked up, a
damaged or foreign index is rebuilt without an error, and the prefilter finds the same rules as
the plain definition of ``needs``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import tracelens
from tracelens.rulebook import index as rule_index
from tracelens.rulebook.load import load
from tracelens.rulebook.model import RuleError
from tracelens.rulebook.prefilter import Prefilter

RULE = """id: {id}
title: t
category: gpu-oom
severity: fatal
needs: [{needs}]
match: {{all: [{{line: '{needs}'}}]}}
root_cause: {cause}
remedies: [{{title: a}}]
references: [https://example.org]
"""
OLD = time.time_ns() - 3600 * 10**9  # an hour ago: settled stamps


def write(root: Path, rule_id: str, needs: str = "boom", cause: str = "first") -> Path:
    path = root / f"{rule_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(RULE.format(id=rule_id, needs=needs, cause=cause))
    return path


def settle(root: Path) -> None:
    """Date every folder and file an hour back, as if written long before the run."""
    for p in [root, *root.rglob("*")]:
        os.utime(p, ns=(OLD, OLD))


@pytest.fixture
def rules(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "mine"
    write(root, "x/one")
    write(root, "x/other", needs="kaboom")
    settle(root)
    return root


def calls_of(monkeypatch, name: str) -> list[int]:
    """A one-item list counting the calls of ``rule_index.<name>`` from now on."""
    count = [0]
    real = getattr(rule_index, name)

    def counting(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(rule_index, name, counting)
    return count


@pytest.fixture
def parses(monkeypatch):
    """How many rule files were parsed and validated."""
    return calls_of(monkeypatch, "load_rule_file")


def cheap(root: Path, **kw):
    """The rules as a run loads them: checked against the folders' stamps only."""
    return load([root], every_file=False, strict=False, **kw)


def cause_of(rs, text: str = "boom") -> dict[str, str]:
    """Root causes of the rules the prefilter picks for ``text`` (their files checked first)."""
    return {rs.rules[k].id: rs.rules[k].rule.root_cause for k in rs.prefilter.candidates(text)}


def edit_in_place(root: Path) -> None:
    path = root / "x" / "one.yaml"
    with open(path, "r+") as fh:  # same file, same folder mtime: what VS Code or nano do
        fh.write(RULE.format(id="x/one", needs="boom", cause="second"))
        fh.truncate()


def add(root: Path) -> None:
    write(root, "x/two")


def delete(root: Path) -> None:
    (root / "x" / "one.yaml").unlink()


def rename(root: Path) -> None:
    (root / "x" / "one.yaml").rename(root / "x" / "three.yaml")


def save_by_rename(root: Path) -> None:  # vim, emacs, sed -i: a new file renamed over the old
    new = root / "x" / ".one.yaml.tmp"
    new.write_text(RULE.format(id="x/one", needs="boom", cause="second"))
    new.replace(root / "x" / "one.yaml")


def add_folder(root: Path) -> None:
    write(root, "x/deeper/four")


def break_category(root: Path) -> None:
    (root / "categories.yaml").write_text("categories: [{name: gpu-oom}, {name: mine}]\n")
    write(root, "x/mine-cat").write_text(
        RULE.format(id="x/mine-cat", needs="boom", cause="c").replace("gpu-oom", "mine")
    )


@pytest.mark.parametrize(
    "change,ids,causes,error",
    [
        (edit_in_place, {"x/one", "x/other"}, {"x/one": "second"}, None),
        (save_by_rename, {"x/one", "x/other"}, {"x/one": "second"}, None),
        (add, {"x/one", "x/other", "x/two"}, {"x/one": "first", "x/two": "first"}, None),
        (delete, {"x/other"}, {}, None),
        (rename, {"x/other"}, {}, "three.yaml:1: id: is 'x/one' but the file's path says"),
        (add_folder, {"x/one", "x/other", "x/deeper/four"}, None, None),
        (break_category, {"x/one", "x/other", "x/mine-cat"}, None, None),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_a_change_to_the_rules_folder_is_picked_up(rules, change, ids, causes, error):
    before = cheap(rules)
    assert {lr.id for lr in before.rules} == {"x/one", "x/other"}
    change(rules)
    after = cheap(rules)
    if causes is not None:
        assert cause_of(after) == causes
    assert {lr.id for lr in after.rules} == ids
    errors = [str(e) for e in after.errors]
    assert any(error in e for e in errors) if error else errors == [], errors


def test_an_unchanged_folder_is_not_parsed_again(rules, parses):
    cheap(rules)
    assert parses[0] == 2
    rs = cheap(rules)
    assert parses[0] == 2
    assert cause_of(rs) == {"x/one": "first"}  # from the index's stored model


def test_only_the_changed_file_is_parsed_again(rules, parses):
    cheap(rules)
    add(rules)
    cheap(rules)
    assert parses[0] == 3


def test_an_in_place_edit_of_a_rule_the_log_does_not_pick_is_seen_by_a_full_check(rules):
    """The trade-off: a run stats the files of the rules its prefilter picks, not every file;
    ``every_file`` (the rule commands) sees the rest."""
    cheap(rules)
    path = rules / "x" / "other.yaml"
    with open(path, "r+") as fh:
        fh.write(RULE.format(id="x/other", needs="boom", cause="now"))
        fh.truncate()
    assert cause_of(cheap(rules)) == {"x/one": "first"}
    assert cause_of(load([rules], strict=False)) == {"x/one": "first", "x/other": "now"}
    assert cause_of(cheap(rules)) == {"x/one": "first", "x/other": "now"}  # index updated


def test_an_edit_in_the_same_timestamp_tick_is_seen(tmp_path, monkeypatch):
    """A file changed within RACY_NS of the build is stored as unsettled: an edit of the same
    size that keeps the mtime (a coarse clock) is still seen."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = write(tmp_path / "mine", "x/one", cause="first")
    st = path.stat()
    assert cause_of(cheap(tmp_path / "mine")) == {"x/one": "first"}
    path.write_text(RULE.format(id="x/one", needs="boom", cause="other"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert cause_of(cheap(tmp_path / "mine")) == {"x/one": "other"}


def test_a_rule_just_written_is_not_indexed_again_at_every_log(tmp_path, monkeypatch):
    """``rules new`` then ``rules test``: the new file has no settled stamp, so each log read
    for it compares the file's checksum, and the index is built once, not once a log; an edit
    of the same size in the same tick is still seen by the same loaded rules."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = write(tmp_path / "mine", "x/one", cause="first")
    st = path.stat()
    builds = calls_of(monkeypatch, "_build")
    rs = cheap(tmp_path / "mine")
    for _ in range(5):
        assert cause_of(rs) == {"x/one": "first"}
    assert builds[0] == 1
    path.write_text(RULE.format(id="x/one", needs="boom", cause="other"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert cause_of(rs) == {"x/one": "other"} and builds[0] == 2


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00not an index" * 100)


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize("damage", [_garbage, _truncated, _empty], ids=lambda f: f.__name__)
def test_a_damaged_index_is_rebuilt_without_an_error(rules, parses, damage):
    cheap(rules)
    (path,) = (rules.parent / "cache" / "tracelens").glob("rules-*.index")
    damage(path)
    rs = cheap(rules)
    assert parses[0] == 4 and rs.errors == []
    assert cause_of(rs) == {"x/one": "first"}
    assert path.stat().st_size > 1000  # written again


def test_another_tracelens_version_builds_its_own_index(rules, parses, monkeypatch):
    cheap(rules)
    monkeypatch.setattr(tracelens, "__version__", "0.0.0-other")
    rs = cheap(rules)
    assert parses[0] == 4 and cause_of(rs) == {"x/one": "first"}


def test_a_broken_rule_raises_on_every_strict_load(rules):
    (rules / "x" / "one.yaml").write_text("id: x/one\ntitle: [\n")
    for _ in range(2):  # built, then read back from the index
        with pytest.raises(RuleError, match="not valid YAML"):
            load([rules], every_file=False)


def test_without_the_cache_the_rules_load_the_same(rules):
    rs = load([rules], cache=False)
    assert cause_of(rs) == {"x/one": "first"}
    assert not (rules.parent / "cache").exists()


@pytest.mark.parametrize(
    "needs,text,expected",
    [
        ([["boom"], ["bang"]], "a boom here", [0]),
        ([["boom", "bang"]], "bang!", []),
        ([["boom", "bang"]], "bang, boom", [0]),
        ([[["boom", "bang"]], ["x"]], "bang x", [0, 1]),
        ([[["boom", "bang"]], ["x"]], "bang", [0]),
        ([[], ["zzz"]], "anything", [0]),
        ([["CUDA error"], ["CUDA error: out of memory"]], "CUDA error: out of memory", [0, 1]),
        ([["error: out"], ["CUDA error"]], "CUDA error: out of memory", [0, 1]),
        ([["Größe"], ["größe"]], "die Größe", [0]),
        ([["aaa"], ["aa"]], "aaaa", [0, 1]),
        ([["a", "b"], ["b"]], "b a", [0, 1]),
        ([["a", "b"], ["b"]], "a", []),
    ],
)
def test_the_prefilter_picks_the_rules_whose_needs_all_hold(needs, text, expected):
    def plain(ns) -> bool:
        groups = [[n] if isinstance(n, str) else n for n in ns]
        return all(any(lit in text for lit in grp) for grp in groups)

    pf = Prefilter(needs)
    assert pf.candidates(text) == expected == [k for k, ns in enumerate(needs) if plain(ns)]


@pytest.mark.parametrize(
    "replaces,error",
    [(True, None), (False, "'x/one' is also the id of")],
)
def test_several_folders_keep_their_order_and_replaces_through_the_index(
    tmp_path, monkeypatch, replaces, error
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    write(tmp_path / "a", "x/one", cause="from a")
    later = write(tmp_path / "b", "x/one", cause="from b")
    if replaces:
        later.write_text(later.read_text() + "replaces: true\n")
    settle(tmp_path)
    for _ in range(2):  # built, then read back from the index
        rs = load([tmp_path / "a", tmp_path / "b"], every_file=False, strict=False)
        assert cause_of(rs) == {"x/one": "from b" if replaces else "from a"}
        errors = [str(e) for e in rs.errors]
        assert (error in errors[0]) if error else errors == [], errors


def test_a_new_folder_beside_indexed_ones_parses_only_its_own_rules(rules, tmp_path, parses):
    """A user's --rules folder next to the shipped ones: the first folder's files come from its
    own index, so the first run with a new folder parses that folder's rules, not all of them."""
    cheap(rules)
    assert parses[0] == 2
    mine = tmp_path / "pack"
    write(mine, "y/three", needs="bang", cause="third")
    settle(mine)
    rs = load([rules, mine], every_file=False, strict=False)
    assert parses[0] == 3
    cold = load([rules, mine], cache=False, strict=False)
    assert [r.id for r in rs.rules] == [r.id for r in cold.rules] == ["x/one", "x/other", "y/three"]
    assert [r.rule for r in rs.rules] == [r.rule for r in cold.rules]
    assert cause_of(rs, "boom bang") == {"x/one": "first", "y/three": "third"}


def test_a_new_folder_with_its_own_categories_validates_every_rule_again(rules, tmp_path, parses):
    cheap(rules)
    mine = tmp_path / "pack"
    write(mine, "y/three", needs="bang")
    (mine / "categories.yaml").write_text("categories: [{name: gpu-oom}, {name: mine}]\n")
    settle(mine)
    load([rules, mine], every_file=False, strict=False)
    assert parses[0] == 2 + 3


def test_an_example_log_added_beside_a_rule_is_listed(rules):
    assert cheap(rules).get("x/one").examples == []
    (rules / "x" / "one.example-2.log").write_text("boom\n")
    (rules / "x" / "one.example.log").write_text("boom\n")
    (rules / "x" / "other-notes.log").write_text("boom\n")
    assert cheap(rules).get("x/one").examples == [
        rules / "x" / "one.example-2.log",
        rules / "x" / "one.example.log",
    ]


def test_a_broken_rule_fixed_in_place_loads_on_the_next_run(rules):
    """A rule file that did not load is stat'ed on every run: its fix written in place (the
    folder's stamp unchanged) is seen, and its error no longer reported."""
    path = rules / "x" / "one.yaml"
    path.write_text("id: x/one\ntitle: t\ntitle: duplicate key\n")
    os.utime(path, ns=(OLD, OLD))
    os.utime(path.parent, ns=(OLD, OLD))
    broken = cheap(rules)
    assert [Path(e.path).name for e in broken.errors] == ["one.yaml"]
    assert {lr.id for lr in broken.rules} == {"x/other"}
    with open(path, "r+") as fh:  # in place: the folder keeps its stamp
        fh.write(RULE.format(id="x/one", needs="boom", cause="fixed"))
        fh.truncate()
    os.utime(path.parent, ns=(OLD, OLD))
    fixed = cheap(rules)
    assert fixed.errors == []
    assert cause_of(fixed) == {"x/one": "fixed"}


def test_older_cache_files_of_a_kind_are_removed_when_one_is_written(rules, tmp_path):
    """Each set of rules folders and each edit writes a new index: only the newest
    ``CACHE_KEEP`` of a kind stay in the cache folder (other kinds are left alone)."""
    from tracelens.paths import CACHE_KEEP, cache_home

    folder = cache_home() / "tracelens"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(CACHE_KEEP + 5):
        old = folder / f"rules-{k:016x}.index"
        old.write_bytes(b"x")
        os.utime(old, ns=(OLD + k, OLD + k))
    other = folder / "scan-0000000000000001.pickle"
    other.write_bytes(b"y")
    cheap(rules)  # writes a new index
    left = sorted(p.name for p in folder.glob("rules-*.index"))
    assert len(left) == CACHE_KEEP
    assert f"rules-{CACHE_KEEP + 4:016x}.index" in left  # the newest old one stays
    assert "rules-0000000000000000.index" not in left  # the oldest went
    assert other.exists()


def test_the_first_folders_own_index_outlives_many_sets_of_folders(rules, tmp_path, parses):
    """A plain run reads the first folder's own index and every new set of folders is seeded
    from it: indexes of other sets written after it, however many, do not prune it."""
    from tracelens.paths import CACHE_KEEP

    cheap(rules)
    own = rule_index.index_path([rules])
    assert own is not None and own.exists()
    os.utime(own, ns=(OLD, OLD))  # the oldest file of its kind
    for k in range(CACHE_KEEP + 2):
        older = own.with_name(f"rules-{k:016x}.index")
        older.write_bytes(b"x")
        os.utime(older, ns=(OLD + 1 + k, OLD + 1 + k))
    mine = tmp_path / "pack"
    write(mine, "y/three", needs="bang")
    settle(mine)
    load([rules, mine], every_file=False, strict=False)
    assert own.exists()
    assert len(list(own.parent.glob("rules-*.index"))) == CACHE_KEEP + 1  # kept, and spared
    assert parses[0] == 3  # the new set was seeded from it: only its own rule parsed


def test_a_new_set_whose_first_folder_has_no_index_builds_and_keeps_that_one(
    rules, tmp_path, parses
):
    """The first run with --rules before any plain run: the first folder's own index is built
    (and kept) on the way, so the next new set of folders parses only its own rules."""
    assert rule_index.index_path([rules]) is not None
    assert not rule_index.index_path([rules]).exists()
    packs = []
    for name in ("pack", "other-pack"):
        pack = tmp_path / name
        write(pack, f"y/{name}", needs="bang")
        settle(pack)
        packs.append(pack)
    load([rules, packs[0]], every_file=False, strict=False)
    assert rule_index.index_path([rules]).exists()
    assert parses[0] == 3
    load([rules, packs[1]], every_file=False, strict=False)
    assert parses[0] == 4


def test_the_nearest_failure_index_lists_its_examples_without_a_rule_model(rules, monkeypatch):
    """An unrecognized log asks which example logs the nearest-failure index is made of: a
    rule set loaded from its index answers from the index (no rule unpickled), and the same
    as the plain definition (every rule with examples that is not a symptom rule)."""
    from tracelens.rulebook import nearest
    from tracelens.rulebook.load import RuleSet

    (rules / "x" / "one.example.log").write_text("boom\n")
    (rules / "x" / "other.example.log").write_text("kaboom\n")
    symptom = write(rules, "x/after", needs="after")
    symptom.write_text(symptom.read_text() + "secondary: true\n")
    (rules / "x" / "after.example.log").write_text("boom\nafter\n")
    rs = load([rules])
    plain = RuleSet(list(rs.rules))
    expected = [(str(p), rs.rules[k].id) for k, ps in plain.cause_examples() for p in ps]

    def unpickled(self, k):
        raise AssertionError(f"rule {k} unpickled")

    fresh = load([rules])
    monkeypatch.setattr(rule_index.Index, "model", unpickled)
    got = [(path, fresh.rules[k].id) for path, _st, k in nearest._examples(fresh)]
    assert got == expected
    assert sorted(rule_id for _p, rule_id in got) == ["x/one", "x/other"]
