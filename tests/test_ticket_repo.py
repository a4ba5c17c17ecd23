"""--repo for the github-url ticket: only OWNER/NAME as GitHub allows them, so nothing can be
added to the URL and no length makes the trimming loop forever."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tracelens.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "corpus" / "incidents" / "the-fp8-kv-cache-wall.log"


BAD = [
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
]

_EACH_BAD_REPO = """
import contextlib, io, json, sys
from tracelens.cli import main
runs = {}
for repo in json.loads(sys.stdin.read()):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["ticket", sys.argv[1], "--format", "github-url", "--repo", repo])
    runs[repo] = {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
print(json.dumps(runs))
"""


@pytest.fixture(scope="module")
def bad_repo_runs() -> dict[str, dict]:
    """The ticket command with each bad --repo, in one other process: a trimming loop that
    never ends fails the tests (at the timeout) instead of hanging them."""
    p = subprocess.run(
        [sys.executable, "-c", _EACH_BAD_REPO, str(SEED)],
        input=json.dumps(BAD),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(p.stdout)


@pytest.mark.parametrize("repo", BAD)
def test_bad_repo_is_one_line_exit_2(repo, bad_repo_runs):
    p = bad_repo_runs[repo]
    assert p["code"] == 2, p["stdout"][:200]
    assert "--repo must be OWNER/NAME" in p["stderr"]
    assert len(p["stderr"].strip().splitlines()) == 1


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
