"""The ``tracelens`` command as a process: :func:`tracelens.cli.main`, made quick to start and
to leave.

A run reads one log and ends, so the cyclic garbage collector is left off (the objects of one
run are freed when the process ends; commands that run long or read many logs, ``tui`` and
``ingest``, turn it back on), and once the output is flushed the process ends without the
interpreter's teardown: on a small machine that teardown takes longer than diagnosing a crash
log. ``diagnose`` of a large file starts scanning it before anything else is imported
(:func:`tracelens.read.prescan.start_early`).
"""

from __future__ import annotations

import gc
import os
import sys


def run() -> None:
    gc.disable()
    early = len(sys.argv) > 2 and sys.argv[1] == "diagnose"  # a large log: scanned from now on
    if early:
        from tracelens.read.prescan import start_early

        start_early(sys.argv[2:])
    from tracelens.cli import main

    code = main()
    if early:  # a scan the command never took (it failed first) is stopped
        from tracelens.read.prescan import discard

        discard()
    pyregex = sys.modules.get("tracelens.pyregex")
    if pyregex is not None:  # the regex programs this run compiled, for the next one
        pyregex.save()
    if os.name != "posix":  # elsewhere a temporary file may still need its cleanup
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (
            OSError,
            ValueError,
            AttributeError,
        ):  # a closed pipe (`| head`), a full or closed stream
            pass
    os._exit(code)
