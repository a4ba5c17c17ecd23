"""Log text is data in every sink: Textual toasts, Markdown (headings, inline code, links,
tables) and Jira ({noformat}, links, images, colour, tables) show it as the characters it is."""

from __future__ import annotations

import asyncio
import dataclasses
import re

import pytest
from markdown_it import MarkdownIt
from tui_fixtures import own_dirs, seed_report

from tracelens.cli import main
from tracelens.engine import diagnose
from tracelens.incidents.records import Excerpt, ExcerptLine, Incident
from tracelens.incidents.ticket import render_ticket
from tracelens.models import Report
from tracelens.render import render
from tracelens.tui import make_app
from tracelens.tui.remedies import RemedyList

HOSTILE = [
    "[/]",
    "[@click=app.quit]quit[/]",
    "[b]bold[/b] [link=https://evil.example]x[/link]",
    "[x](https://evil.example) ![i](https://evil.example/p.png) <img src=x> @everyone",
    "`code` ``` **b** _i_ # h | pipe",
    "{noformat} {code} {color:red}red{color} [x|https://evil.example] !https://evil.example/p.png! {NOFORMAT}",
    "a\n# heading\n- item\n> quote",
]


@pytest.fixture(scope="module")
def copied(tmp_path_factory) -> dict:
    """One app run over a report whose remedies carry each hostile text in turn (its title and
    its command): each remedy chosen with down (the first is highlighted on arrival; down
    scrolls the page first while the highlighted one is below it) and copied with c. For each text: the toasts its copy added, the clipboard, and whether the app
    still runs."""
    rep = seed_report()
    first = rep.diagnoses[0].remedies[0]
    rep.diagnoses[0].remedies = [
        dataclasses.replace(first, title=text, commands=[f"vllm serve /models/{text}"])
        for text in HOSTILE
    ]
    seen: dict = {}

    async def go(app):
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            for k, text in enumerate(HOSTILE):
                for _ in range(40):  # down scrolls the page while the remedy is below it
                    if app.screen.query_one(RemedyList).index == k:
                        break
                    await pilot.press("down")
                    await pilot.pause()
                before = list(app._notifications)
                await pilot.press("c")
                await pilot.pause()
                seen[text] = {
                    "toasts": [
                        (n.message, n.markup) for n in app._notifications if n not in before
                    ],
                    "clipboard": app.clipboard,
                    "running": app.is_running,
                }

    base = tmp_path_factory.mktemp("copied")
    with own_dirs(base):
        asyncio.run(go(make_app(db_path=base / "none.db", report=rep)))
    return seen


@pytest.mark.slow  # the app's run behind these cases is a Pilot walk (tests/tiers.py)
@pytest.mark.parametrize("text", HOSTILE)
def test_copied_toast_shows_log_text_literally(copied, text):
    seen = copied[text]
    assert seen["running"]
    assert seen["clipboard"] == f"vllm serve /models/{text}"
    assert seen["toasts"] and all(markup is False for _message, markup in seen["toasts"])


def _hostile_report(text: str) -> Report:
    data = seed_report()
    top = data.diagnoses[0]
    top.title = f"Unrecognized failure: {text}"
    top.root_cause = f"It failed: {text}"
    top.notes = [text]
    top.remedies[0].title = text
    top.remedies[0].steps = [text]
    top.remedies[0].commands = [f"vllm serve {text}"]
    top.does_not_help = [text]
    data.facts = {"model": text, "model_path": f"/m/{text}", "vllm_version": "0.8.5"}
    return data


def _incident(text: str) -> Incident:
    return Incident(
        id=7,
        title=text,
        count=2,
        first_seen="2025-01-01",
        last_seen="2025-01-02",
        status="open",
        resolution_note=text,
        fingerprint="f",
    )


def _excerpt(text: str) -> Excerpt:
    return Excerpt(lines=[ExcerptLine(line=1, text=text, origin=True)])


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("with_incident", [False, True])
def test_markdown_ticket_renders_log_text_literally(text, with_incident):
    md = render_ticket(
        "markdown",
        _hostile_report(text),
        _excerpt(text),
        _incident(text) if with_incident else None,
    )
    html = _html(md)
    assert "evil.example" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', html))
    assert "<img" not in html and "<strong>b" not in html and "<em>i" not in html
    prose = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "@everyone" not in prose  # mentions defused (code is shown as is)
    # every fact value is one whole inline code span in its table cell
    cells = re.findall(r"<td><code>(.*?)</code></td>", html)
    assert len(cells) == 3 and all("</code>" not in c for c in cells)
    assert html.count("<h2>") == 1 and "<h1>" not in html


def _jira_outside_blocks(text: str) -> tuple[list[str], list[str]]:
    """(lines outside {noformat} blocks, the blocks' contents)."""
    outside, blocks, inside, current = [], [], False, []
    for line in text.splitlines():
        if line == "{noformat}":
            if inside:
                blocks.append("\n".join(current))
                current = []
            inside = not inside
            continue
        (current if inside else outside).append(line)
    assert not inside, "a {noformat} block is left open"
    return outside, blocks


@pytest.mark.parametrize("text", HOSTILE)
def test_jira_ticket_renders_log_text_literally(text):
    jira = render_ticket("jira", _hostile_report(text), _excerpt(text), _incident(text))
    outside, blocks = _jira_outside_blocks(jira)
    for block in blocks:
        assert not re.search(r"\{(noformat|code)", block, re.IGNORECASE)
    for line in outside:
        bare = re.sub(r"\\.", "", line)  # escaped characters are literal
        assert not re.search(r"[\[\]{}!]", bare), line
        if line.startswith("|") and not line.startswith("||"):
            assert bare.count("|") == 3, line  # a fact row: two cells


@pytest.mark.parametrize("fmt", ["markdown", "jira"])
@pytest.mark.parametrize("text", HOSTILE[3:6])
def test_diagnose_markup_formats_escape_an_unrecognized_title(fmt, text):
    log = (
        "\n".join(
            [
                "Traceback (most recent call last):",
                '  File "/app/tl_fixture/run.py", line 3, in go',
                "    step()",
                f"RuntimeError: {' '.join(text.split())}",
            ]
        )
        + "\n"
    )
    out = render(diagnose(log), fmt)
    if fmt == "markdown":
        html = _html(out)
        assert (
            "evil.example" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', html))
            and "<img" not in html
        )
    else:
        outside, _ = _jira_outside_blocks(out)
        assert all(
            not re.search(r"(?<!\\)[\[!]|(?<!\\)\{(?!\{)", re.sub(r"\{\{|\}\}", "", line))
            for line in outside
        )


def test_ticket_from_a_log_with_a_hostile_message_is_literal(tmp_path, capsys):
    log = tmp_path / "x.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/app/tl_fixture/run.py", line 3, in go\n'
        "    step()\n"
        "RuntimeError: see [docs](https://evil.example) ![p](https://evil.example/p.png) @everyone `x\n"
    )
    assert main(["ticket", str(log), "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    html = _html(md)
    assert "evil.example" in md and "<img" not in html and 'href="https://evil.example"' not in html
    assert "@everyone" not in re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", html, flags=re.DOTALL)
