"""The fixed lines CPython prints around a traceback, shared by the lexer and the passes that
run before it."""

TB_HEAD = "Traceback (most recent call last):"
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"
