"""The command line: a thin click layer over the library, one module per command group,
registered here on the root group (:mod:`tracelens.cli.app`)."""

from tracelens.cli import diagnose, incidents, ingest, rules, top
from tracelens.cli.app import cli, main

for _command in (
    diagnose.diagnose,
    diagnose.parse,
    diagnose.explain,
    rules.rules,
    ingest.ingest,
    top.top,
    incidents.incidents,
    incidents.similar,
    incidents.ticket,
    incidents.tui,
):
    cli.add_command(_command)

__all__ = ["cli", "main"]
