"""The command line: a thin click layer over the library, one module per command group,
registered here on the root group (:mod:`tracelens.cli.app`).

A command's module is imported when that command runs (or help lists it), click's lazily loaded
subcommands: ``tracelens diagnose`` does not import the modules of ``ingest``, ``top``,
``incidents`` or ``rules``.
"""

from tracelens.cli.app import cli, main

for _name, _target in (
    ("diagnose", "tracelens.cli.diagnose:diagnose"),
    ("parse", "tracelens.cli.diagnose:parse"),
    ("explain", "tracelens.cli.diagnose:explain"),
    ("rules", "tracelens.cli.rules:rules"),
    ("ingest", "tracelens.cli.ingest:ingest"),
    ("top", "tracelens.cli.top:top"),
    ("incidents", "tracelens.cli.incidents:incidents"),
    ("similar", "tracelens.cli.incidents:similar"),
    ("ticket", "tracelens.cli.incidents:ticket"),
    ("tui", "tracelens.cli.incidents:tui"),
):
    cli.add_lazy(_name, _target)

__all__ = ["cli", "main"]
