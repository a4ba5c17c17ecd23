from tracelens.cli.entry import run

run()
