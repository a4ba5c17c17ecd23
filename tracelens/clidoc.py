"""The CLI reference (docs/cli.md), generated from the commands' own help; a test fails when
the committed file is stale. Refresh: ``python -m tracelens.clidoc > docs/cli.md``."""

from __future__ import annotations

import click


def _walk(cmd: click.Command, path: list[str]):
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _walk(cmd.commands[name], [*path, name])


def commands():
    from .cli import cli

    return list(_walk(cli, ["tracelens"]))


def reference() -> str:
    out = ["# CLI reference", "", "Generated from the commands' help by `python -m tracelens.clidoc`.", ""]
    for path, cmd in commands():
        ctx = click.Context(cmd, info_name=" ".join(path), terminal_width=100, max_content_width=100)
        out += [f"## {' '.join(path)}", "", "```", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
