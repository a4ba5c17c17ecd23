"""The CLI reference (docs/cli.md), generated from the commands' own help; a test fails when
the committed file is stale. Refresh: ``python -m tracelens.cli.doc > docs/cli.md``."""

from __future__ import annotations

import click

WIDTH = 100  # the reference's help pages are this wide, whatever the terminal


def commands() -> list[tuple[list[str], click.Command]]:
    """``(path, command)`` for the program and every group and command."""
    from tracelens.cli import cli

    out: list[tuple[list[str], click.Command]] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        out.append((path, cmd))
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd, info_name=path[-1])
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name])

    walk(cli, ["tracelens"])
    return out


def help_page(path: list[str], cmd: click.Command) -> str:
    """The help page ``tracelens ... --help`` prints, at :data:`WIDTH` columns."""
    parent = None
    for k, name in enumerate(path):
        ctx = click.Context(
            cmd if k == len(path) - 1 else click.Command(name),
            info_name=name,
            parent=parent,
            terminal_width=WIDTH,
            max_content_width=WIDTH,
            help_option_names=["-h", "--help"],
        )
        parent = ctx
    return ctx.get_help()


def reference() -> str:
    out = [
        "# CLI reference",
        "",
        "Generated from the commands' help by `python -m tracelens.cli.doc`.",
        "",
    ]
    for path, cmd in commands():
        out += [f"## {' '.join(path)}", "", "```", help_page(path, cmd).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
