"""The fixed lines CPython prints around a traceback, shared by the lexer and the passes that
run before it, and a shell prompt's line."""

import re
from functools import cache

from tracelens.pyregex import compile_re

TB_HEAD = "Traceback (most recent call last):"
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"

MESSAGE_BLOCK = compile_re(
    r"(?:Command|Output):$|Set TORCH_LOGS=|You can suppress this exception|While executing "
)
"""A paragraph that continues an exception's message after a blank line: the blocks
torch.compile prints in its errors (the C++ compiler's command and output, the logging and
fallback hints). Not its "from user code:" block: those are frames, which the message would
take for a traceback of its own."""

CUT_ABOVE = compile_re(
    r"\s*(?:(?:```|~~~)[\w+-]*|\.\.\.|\u2026|\[\.\.\.\]|\[?\.*\s*truncated\s*\.*\]?)\s*$", re.I
)
"""A line above frames pasted without their traceback's header: a Markdown fence, or a mark
of lines left out (``...``, ``[...]``, ``[truncated]``)."""
CUT_MARKS = ("```", "~~~", "...", "\u2026", "runcated", "RUNCATED")
"""Literals of :data:`CUT_ABOVE`'s lines, searched for to find them."""

PROMPT = compile_re(r"(?:\(\S+\) )?(?:[\w.-]+@[\w.-]+:\S*[$#]|\$|PS [A-Za-z]:\\[^>]*>) \S")
"""A shell prompt with the command typed after it: "$ kubectl logs ...", "user@host:~/run$ cat
out.log", "(venv) user@host:/srv# python serve.py", PowerShell's "PS C:\\work> python ...". What
the user typed, never what failed, whatever words it holds (``$ grep OutOfMemoryError *.log``)."""


@cache
def _asked_status() -> re.Pattern[str]:
    """A command that prints the exit status of the one before it (bash, fish, cmd, PowerShell),
    compiled when a log first shows a status after a prompt."""
    return compile_re(r"\becho (?:\$\?|\$status|%errorlevel%|\$LASTEXITCODE)\s*$", re.I)


_SIGNALS = {137: "killed", 132: "crash", 134: "crash", 135: "crash", 136: "crash", 139: "crash"}
"""Statuses of a process a signal ended: SIGKILL (the OOM killer's), SIGILL, SIGABRT, SIGBUS,
SIGFPE, SIGSEGV (130 and 143, SIGINT and SIGTERM, are someone asking it to stop)."""


def exit_status(asked: str, said: str) -> str | None:
    """The failure kind of a status a shell printed (``said``) for ``echo $?`` (``asked``: the
    line above it), or None when it is no failure.

    >>> exit_status("$ echo $?", "137"), exit_status("$ echo $?", "1"), exit_status("$ ls", "1")
    ('killed', 'died', None)
    """
    said = said.strip()
    if not said.isdigit() or not PROMPT.match(asked) or not _asked_status().search(asked):
        return None
    code = int(said)
    if code in _SIGNALS:
        return _SIGNALS[code]
    return "died" if code and code not in (130, 143) else None
