"""The incident commands without rough edges: a real table with 'N of M', dates and ids
validated in one line, tickets that are links or keys, ignore and reopen."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from tui_fixtures import make_store

from tracelens.cli import main
from tracelens.cli.incidents import parse_since


@pytest.fixture()
def db(tmp_path):
    return make_store(tmp_path / "incidents.db")


def test_list_is_a_table_with_a_header_and_a_count(db, capsys):
    assert main(["incidents", "list", "--db", str(db), "--limit", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:6] == ["ID", "LAST", "SEEN", "SEEN", "STATUS", "SEVERITY"]
    assert out[-1].startswith("2 of ") and "--limit" in out[-1]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["incidents", "list", "--since", "yesterdayish"], "--since 'yesterdayish'"),
        (["incidents", "list", "--category", "gpuoom"], "did you mean 'gpu-oom'"),
        (["incidents", "attach", "1", "not a url"], "is not a ticket"),
    ],
)
def test_bad_values_are_one_line(db, args, needle, capsys):
    assert main([*args, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2025-01-20", "2025-01-20T00:00:00"),
        ("2025-01-20T08:30", "2025-01-20T08:30:00"),
        ("3d", "2025-01-28T12:00:00"),
        ("12h", "2025-01-31T00:00:00"),
        ("1w", "2025-01-24T12:00:00"),
        ("today", "2025-01-31T00:00:00"),
        ("yesterday", "2025-01-30T00:00:00"),
    ],
)
def test_since_reads_dates_ages_and_words(value, expected):
    assert parse_since(value, datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc)) == expected


def test_since_filters(db, capsys):
    assert (
        main(["incidents", "list", "--db", str(db), "--since", "2000-01-01", "--format", "json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)
    assert main(["incidents", "list", "--db", str(db), "--since", "2999-01-01"]) == 0
    assert "no incidents" in capsys.readouterr().out


@pytest.mark.parametrize("ref", ["https://tracker.example.org/browse/OPS-1234", "OPS-1234", "#42"])
def test_attach_takes_links_and_keys(db, ref, capsys):
    assert main(["incidents", "attach", "1", ref, "--db", str(db)]) == 0


def test_ignore_and_reopen(db, capsys):
    assert main(["incidents", "ignore", "1", "--db", str(db)]) == 0
    assert "incident 1: ignored" in capsys.readouterr().out
    assert (
        main(["incidents", "list", "--db", str(db), "--status", "ignored", "--format", "json"]) == 0
    )
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [1]
    assert main(["incidents", "reopen", "1", "--db", str(db)]) == 0
    assert "incident 1: open" in capsys.readouterr().out
    assert (
        main(["incidents", "list", "--db", str(db), "--status", "ignored", "--format", "json"]) == 0
    )
    assert json.loads(capsys.readouterr().out) == []


def test_ingest_goes_on_past_a_missing_path_and_says_so(tmp_path, capsys):
    from pathlib import Path

    seed = (
        Path(__file__).resolve().parent.parent
        / "corpus"
        / "incidents"
        / "the-fp8-kv-cache-wall.log"
    )
    db = tmp_path / "i.db"
    assert main(["ingest", str(tmp_path / "nosuch.log"), str(seed), "--db", str(db)]) == 2
    out, err = capsys.readouterr()
    assert "1 new incident(s)" in out and "1 path(s) not found" in out
    assert "nosuch.log: no such file or directory" in err


def test_a_github_link_keeps_the_environment_and_cuts_at_line_boundaries():
    from urllib.parse import parse_qs, urlparse

    from tracelens.engine import diagnose
    from tracelens.incidents.records import Excerpt, ExcerptLine
    from tracelens.incidents.ticket import GITHUB_URL_LIMIT, github_url

    seed = (
        Path(__file__).resolve().parent.parent
        / "corpus"
        / "incidents"
        / "the-fp8-kv-cache-wall.log"
    )
    rep = diagnose(seed.read_bytes(), source=seed.name)
    excerpt = Excerpt(
        lines=[
            ExcerptLine(line=k, text=f"line {k}: " + "word " * 30, origin=True) for k in range(400)
        ]
    )
    url = github_url("vllm-project/vllm", rep, excerpt)
    assert len(url) <= GITHUB_URL_LIMIT
    body = parse_qs(urlparse(url).query)["body"][0]
    assert "### Environment" in body and "### Log excerpt" in body
    assert "tracelens locally" not in body and "Incident #" not in body
    excerpt_lines = [ln for ln in body.splitlines() if ln.startswith("line ")]
    assert excerpt_lines and all(
        ln.endswith("word ") or ln.endswith("word") for ln in excerpt_lines
    )
