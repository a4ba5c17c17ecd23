"""Renderers: a :class:`~tracelens.models.Report` to text, JSON, Markdown or Jira markup."""

from __future__ import annotations

from ..models import Report

FORMATS = ("text", "json", "markdown", "jira")


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        from .jsonout import render_json

        return render_json(report)
    if fmt == "markdown":
        from .markdown import render_markdown

        return render_markdown(report)
    if fmt == "jira":
        from .jira import render_jira

        return render_jira(report)
    from .text import render_text

    return render_text(report, color=color)
