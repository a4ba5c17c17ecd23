"""The fixed lines CPython prints around a traceback, shared by the lexer and the passes that
run before it, and a shell prompt's line."""

import re

TB_HEAD = "Traceback (most recent call last):"
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"

MESSAGE_BLOCK = re.compile(
    r"(?:Command|Output):$|Set TORCH_LOGS=|You can suppress this exception|While executing "
)
"""A paragraph that continues an exception's message after a blank line: the blocks
torch.compile prints in its errors (the C++ compiler's command and output, the logging and
fallback hints). Not its "from user code:" block: those are frames, which the message would
take for a traceback of its own."""

CUT_ABOVE = re.compile(
    r"\s*(?:(?:```|~~~)[\w+-]*|\.\.\.|\u2026|\[\.\.\.\]|\[?\.*\s*truncated\s*\.*\]?)\s*$", re.I
)
"""A line above frames pasted without their traceback's header: a Markdown fence, or a mark
of lines left out (``...``, ``[...]``, ``[truncated]``)."""
CUT_MARKS = ("```", "~~~", "...", "\u2026", "runcated", "RUNCATED")
"""Literals of :data:`CUT_ABOVE`'s lines, searched for to find them."""

PROMPT = re.compile(r"(?:\(\S+\) )?(?:[\w.-]+@[\w.-]+:\S*[$#]|\$|PS [A-Za-z]:\\[^>]*>) \S")
"""A shell prompt with the command typed after it: "$ kubectl logs ...", "user@host:~/run$ cat
out.log", "(venv) user@host:/srv# python serve.py", PowerShell's "PS C:\\work> python ...". What
the user typed, never what failed, whatever words it holds (``$ grep OutOfMemoryError *.log``)."""
