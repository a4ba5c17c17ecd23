"""Python exceptions that a C++ program logs as one pybind11 string.

pybind11 formats a Python exception caught in C++ as ``Type: message``, a blank line, ``At:``
and one ``  file(line): function`` line per frame, innermost first. Triton's Python backend logs
its stub's failure that way, on one log line (INFO level) with the line breaks escaped from
r24.xx on::

    I0911 08:21:51.554457 1 pb_stub.cc:389] "Failed to initialize Python stub: ModuleNotFoundError:
    No module named 'cv2'\\n\\nAt:\\n  /models/m/1/model.py(5): <module>\\n"

Read as a traceback (frames outermost first, as Python prints them), rules about the exception
(a module that is missing, an attribute an API lost) apply to it as to any other traceback.

>>> from tracelens.models import Record
>>> tb = stub_traceback(Record(line=7, text='"Failed to initialize Python stub: '
...     "ModuleNotFoundError: No module named 'cv2'\\\\n\\\\nAt:\\\\n"
...     "  /models/m/1/model.py(5): <module>\\\\n"
...     '  <frozen importlib._bootstrap>(488): _call_with_frames_removed\\\\n"'))
>>> seg = tb.segments[0]
>>> seg.exception.type, seg.exception.message
('ModuleNotFoundError', "No module named 'cv2'")
>>> [(f.file, f.lineno, f.function) for f in seg.frames]
[('<frozen importlib._bootstrap>', 488, '_call_with_frames_removed'), ('/models/m/1/model.py', 5, '<module>')]
"""

from __future__ import annotations

from tracelens.models import ExceptionInfo, Record, Segment, Traceback
from tracelens.parse.lexer import EXCEPTION_LINE
from tracelens.parse.traceback import frame_at
from tracelens.pyregex import compile_re

STUB = "Failed to initialize Python stub: "
"""Triton's Python backend (pb_stub.cc) before the exception of its stub."""

_AT_FRAME = compile_re(r"^\s+(?P<file>\S(?:.*\S)?)\((?P<lineno>\d+)\): (?P<func>\S+)\s*$")


def stub_traceback(rec: Record) -> Traceback | None:
    """The exception (and its ``At:`` frames) in a line that holds Triton's stub failure, or
    None when the line does not hold one in pybind11's form."""
    at = rec.text.find(STUB)
    if at < 0:
        return None
    body = rec.text[at + len(STUB) :].strip().rstrip('"').replace("\\n", "\n")
    head, _, where = body.partition("\n\nAt:\n")
    first, _, rest = head.partition("\n")
    found = EXCEPTION_LINE.match(first.strip())
    if found is None:
        return None
    message = "\n".join(part for part in [found.group("msg"), rest.strip()] if part)
    frames = []
    for text in where.splitlines():
        m = _AT_FRAME.match(text)
        if m is not None:
            frames.append(frame_at(m, rec.line, rec.line))
    frames.reverse()  # pybind11 lists the innermost frame first
    exception = ExceptionInfo(
        type=found.group("type"), message=message, line=rec.line, end_line=rec.line
    )
    return Traceback(
        segments=[Segment(frames=frames, exception=exception, start_line=rec.line)],
        start_line=rec.line,
        end_line=rec.line,
        stream=rec.stream,
        lines=[rec.line],
    )
