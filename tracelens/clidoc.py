"""The CLI reference (docs/cli.md), generated from the commands' own help; a test fails when
the committed file is stale. Refresh: ``python -m tracelens.clidoc > docs/cli.md``."""

from __future__ import annotations

import click


def _walk(cmd: click.Command, path: list[str], parent: click.Context | None):
    if parent is None:  # the root context carries the settings every page is rendered with
        ctx = click.Context(cmd, info_name=path[-1], terminal_width=100, max_content_width=100, **cmd.context_settings)
    else:
        ctx = click.Context(cmd, info_name=path[-1], parent=parent)
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _walk(cmd.commands[name], [*path, name], ctx)


def commands():
    from .cli import cli

    return [(path, cmd) for path, cmd, _ctx in _walk(cli, ["tracelens"], None)]


def reference() -> str:
    from .cli import cli

    out = ["# CLI reference", "", "Generated from the commands' help by `python -m tracelens.clidoc`.", ""]
    for path, cmd, ctx in _walk(cli, ["tracelens"], None):
        out += [f"## {' '.join(path)}", "", "```", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
