"""Failure lines of the programs that start a job's processes on other nodes: ssh as mpirun
(Open MPI's ORTE, PRRTE) or a launcher script uses it, mpirun's own report when its daemons
did not start, and Open MPI's fatal error in a process that could not join the job. Standard library only, like :mod:`tracelens.read.shapes`."""

from __future__ import annotations

from tracelens.read.shape import Shape

LAUNCH_SHAPES: tuple[Shape, ...] = (
    Shape(
        "launch",
        # ssh could not log in to, reach or trust a node (OpenSSH's own words); the remote shell
        # could not find mpirun's daemon; ORTE / PRRTE gave up on starting its daemons
        r"\bPermission denied \((?:publickey|password|gssapi|keyboard)[\w,-]*\)\.?$|"
        r"^Host key verification failed\.$|^ssh: Could not resolve hostname \S+: |"
        r"^ssh: connect to host \S+ port \d+: |\b(?:orted|prted): (?:command )?not found\b|"
        r"^(?:ORTE|PRTE|prterun) (?:was|is) unable to reliably start one or more daemons|"
        # Open MPI's fatal error handler (MPI_ERRORS_ARE_FATAL): MPI_Init in a process that
        # could not join the job
        r"^\*\*\* An error occurred in MPI_\w+",
        (
            "root@trainer-worker-1.trainer-worker: Permission denied (publickey,password).",
            "mpiuser@node-02: Permission denied (publickey).",
            "Host key verification failed.",
            "ssh: Could not resolve hostname trainer-worker-0.trainer-worker: Name or service not known",
            "ssh: connect to host node-03 port 22: Connection refused",
            "bash: orted: command not found",
            "bash: line 1: prted: command not found",
            "ORTE was unable to reliably start one or more daemons.",
            "PRTE was unable to reliably start one or more daemons.",
            "*** An error occurred in MPI_Init_thread",
        ),
        triggers=(
            b"Permission denied (",
            b"Host key verification failed",
            b"ssh: Could not resolve hostname",
            b"ssh: connect to host",
            b"orted:",
            b"prted:",
            b"to reliably start one or more daemons",
            b"An error occurred in MPI_",
        ),
    ),
)
