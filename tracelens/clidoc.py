"""The CLI reference (docs/cli.md), generated from the commands' own help; a test fails when
the committed file is stale. Refresh: ``python -m tracelens.clidoc > docs/cli.md``."""

from __future__ import annotations

WIDTH = 100  # the reference's help pages are this wide, whatever the terminal


def _walk(parser, path: list[str]):
    yield path, parser
    for name, sub in sorted(parser.subcommands().items()):
        yield from _walk(sub, [*path, name])


def commands():
    """``(path, parser)`` for the program and every group and command, from the argparse tree;
    a parser's ``description`` is its command's docstring."""
    from .cli import cli

    return list(_walk(cli.build_parser(), ["tracelens"]))


def reference() -> str:
    from .cliparse import help_page

    out = ["# CLI reference", "", "Generated from the commands' help by `python -m tracelens.clidoc`.", ""]
    for path, parser in commands():
        out += [f"## {' '.join(path)}", "", "```", help_page(parser, WIDTH).rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(reference(), end="")
