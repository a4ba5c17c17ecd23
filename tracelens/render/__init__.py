"""Renderers: a :class:`~tracelens.models.Report` to text, JSON, Markdown or Jira markup."""

from __future__ import annotations

from tracelens.models import Report

FORMATS = ("text", "json", "markdown", "jira")


def render(
    report: Report, fmt: str, *, color: bool = False, full: bool = True, width: int = 0
) -> str:
    """``full`` and ``width`` shape the text report only (the other formats are always whole)."""
    if fmt == "json":
        from tracelens.render.jsonout import render_json

        return render_json(report)
    if fmt == "markdown":
        from tracelens.render.markdown import render_markdown

        return render_markdown(report)
    if fmt == "jira":
        from tracelens.render.jira import render_jira

        return render_jira(report)
    from tracelens.render.text import render_text

    return render_text(report, color=color, full=full, width=width)
