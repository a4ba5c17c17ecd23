"""--repo for the github-url ticket: only OWNER/NAME as GitHub allows them, so nothing can be
added to the URL and no length makes the trimming loop forever."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tracelens.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"


@pytest.mark.parametrize(
    "repo",
    [
        "o/" + "r" * 7800,
        "o" * 7800 + "/r",
        "o/r?title=Pwned&body=x",
        "o/r#x",
        "o/r/../../other",
        "o/r&labels=x",
        "o /r",
        "o/.",
        "o/..",
        "-o/r",
        "/r",
        "o/",
        "o//r",
    ],
)
def test_bad_repo_is_one_line_exit_2(repo):
    # a subprocess, so that a trimming loop that never ends fails the test instead of hanging it
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tracelens",
            "ticket",
            str(SEED),
            "--format",
            "github-url",
            "--repo",
            repo,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 2, p.stdout[:200]
    assert "--repo must be OWNER/NAME" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "repo", ["vllm-project/vllm", "sgl-project/sglang", "o/name.with_dots-1", "A1/x"]
)
def test_good_repo_gives_a_url_of_that_repo_with_one_title(repo, capsys):
    assert main(["ticket", str(SEED), "--format", "github-url", "--repo", repo]) == 0
    url = capsys.readouterr().out.strip()
    parts = urlsplit(url)
    assert parts.netloc == "github.com" and parts.path == f"/{repo}/issues/new"
    query = parse_qs(parts.query)
    assert set(query) == {"title", "body"} and len(query["title"]) == 1
