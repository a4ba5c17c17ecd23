"""The originating failure: among every failure of every process in a log, the one the others
report.

Candidates are the exceptions of uncaught tracebacks (chained, nested and grouped ones in print
order), ``SomeError: message`` lines printed alone, and the failure lines of
:mod:`tracelens.read.failures`. Skipped: what only reports another failure (the wrappers the
symptom rules declare under ``reports:``, and the table's wrapper shapes), teardown exceptions
(``KeyboardInterrupt``, ``CancelledError`` ...), anything after someone asked the process to
stop, tracebacks logged at warning level or below (handled), and requests answered with a 4xx
status (the client's error, not the server's). The earliest remaining candidate is the origin.

A failure is *recovered* when the program visibly carried on after it (requests answered with
2xx, throughput lines, training loss lines, a server that finished starting) and nothing failed
after that: a handled problem, not a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracelens.models import Document, ExceptionInfo, Frame, Record, Traceback
from tracelens.parse.document import _segments, quoted_exception, says_warning
from tracelens.parse.frames import importing
from tracelens.parse.lifecycle import stop_requested_line
from tracelens.parse.marks import TB_HEAD
from tracelens.pyregex import compile_re
from tracelens.read.failures import SHAPES
from tracelens.regex import compile_regex, found
from tracelens.rulebook.logged import AT_SHUTDOWN, last_words, logged_cause
from tracelens.rulebook.progress import (
    SERVE_REQUEST,
    carried_on,
    nccl_recovered,
    probe,
    vital_thread_died,
)
from tracelens.rulebook.wrappers import Wrappers  # noqa: F401  (part of this module's interface)

if TYPE_CHECKING:  # built by tracelens.rulebook.hang, which reads Origin from here
    from tracelens.rulebook.hang import Hang

# raised by a stop or by the teardown after another failure, never the failure itself
_TEARDOWN = compile_re(
    r"(?:^|\.)(?:KeyboardInterrupt|SystemExit|CancelledError|BrokenPipeError|ConnectionResetError|"
    r"GeneratorExit|ClosedResourceError)$"
)
_GROUP = compile_re(r"(?:^|\.)(?:Base)?ExceptionGroup$")
_HANDLED_LEVELS = frozenset({"WARNING", "WARN", "INFO", "DEBUG", "TRACE"})
_HANDLED = frozenset({"WARNING", "WARN"})  # the level a handler logs a caught traceback at
# an exception whose message carries another process's traceback (multiprocessing, Ray)
# a rank's traceback in a CheckpointException (quoted by it, printed after the previous rank's)
_RANK_HEADER = compile_re(r"Traceback \(most recent call last\): \(RANK \d+\)")


def _quotes_traceback(exc) -> bool:
    """Whether an exception's message quotes the traceback of the failure it reports."""
    text = exc.type + " " + exc.message[:2000]
    if not exc.type.endswith("CheckpointException"):
        text = _RANK_HEADER.sub("", text)  # the next rank's, not one this exception reports
    return _QUOTES_TRACEBACK.search(text) is not None


_QUOTES_TRACEBACK = compile_re(
    r"Traceback \(most recent call last\)|RemoteTraceback|RayTaskError|ProcessRaisedException"
)
# what a server raises to refuse a bad request
_CLIENT_LIBRARIES = ("openai.", "litellm.", "anthropic.", "httpx.", "requests.", "aiohttp.")
"""Modules of the HTTP and API clients whose exceptions report a server's answer."""
_VALIDATION_TYPES = compile_re(
    r"(?:ValueError|ValidationError|HTTPException|BadRequestError|OverflowError|"
    # a chat template that refused the conversation (vLLM's chat handler answers it with 400)
    r"TemplateError|TemplateSyntaxError|UndefinedError)$"
)
# pydantic's first line only counts the errors; the next lines say what is wrong
_VALIDATION = compile_re(r"ValidationError$")
_PYDANTIC = compile_re(r"\d+ validation errors? for ")  # pydantic's first line; the error below
_WRAPPER_KINDS = frozenset(s.kind for s in SHAPES if s.wrapper)
_SELF_KILL = "Received sigquit from a child process"
"""SGLang's launcher, told by a child that it failed, SIGKILLs its process tree and then itself
(kill_process_tree): a shell's ``Killed`` or an exit code 137 after this notice is its doing."""


_TRACED_KILL = (
    r"^\++ (?:sudo )?(?:xargs (?:-r )?)?(?:kill|pkill|killall) (?:.* )?"
    r"(?:-9|-KILL|-SIGKILL|-s (?:9|KILL|SIGKILL))(?: |$)"
)
"""A script's own SIGKILL as bash's ``set -x`` traces it (``+ kill -9 20871``, ``+ pkill -9 -f
vllm``): a shell's ``Killed`` notice after it is the script's doing, not the kernel's."""


def _traced_kill(text: str) -> bool:
    return text.startswith("+") and found(compile_regex(_TRACED_KILL), text)


_REFUSED = compile_re(r'HTTP/\d(?:\.\d)?" 4\d\d\b|' + SERVE_REQUEST + r"4\d\d [\d.]+ms\b")
"""An access-log line of a request the server refused with 4xx."""
_ANSWERED = compile_re(r'HTTP/\d(?:\.\d)?" [23]\d\d\b|' + SERVE_REQUEST + r"[23]\d\d [\d.]+ms\b")
"""An access-log line of a request the server answered."""
_CLIENT_ERROR = compile_re(
    _REFUSED.pattern + r"|\b4\d\d (?:Bad Request|Not Found|Unprocessable Entity)\b"
)
_CLIENT_SIDE = "HTTP Request: "
"""httpx's log of a request this program sent ("HTTP Request: POST http://... "HTTP/1.1 400 Bad
Request""): a client's answer, not a server refusing one of its own clients."""


@dataclass
class Origin:
    """The failure that started it all."""

    line: int
    """The line that says what failed (the exception line, or the failure line)."""
    text: str
    """That line's text, with its message's continuation lines."""
    stream: str
    kind: str
    """``exception`` or a failure-line kind (``cuda``, ``compiler``, ``killed`` ...)."""
    type: str = ""
    message: str = ""
    frame: Frame | None = None
    """The frame that raised it (innermost), when a traceback was printed."""
    start: int = 0
    """First line of the traceback (or the line itself)."""
    end: int = 0
    """Last line of the traceback or of the message."""
    client: bool = False
    """A request the server refused (a validation error answered with 4xx): handled."""
    hang: Hang | None = None
    """For a run stopped while it hung (:mod:`tracelens.rulebook.hang`): where it waited."""
    importing: bool = False
    """Raised while an installed package was imported (:func:`.frames.importing`)."""

    def covers(self, line: int) -> bool:
        return self.start <= line <= self.end


def _index(doc: Document) -> dict[int, int]:  # each line's first record (JSON lines share one)
    lines = [rec.line for rec in doc.records]
    # built from the last record back, so each line keeps its first (in C: half the time)
    return dict(zip(reversed(lines), range(len(lines) - 1, -1, -1)))


def _handled(doc: Document, pos: dict[int, int], tb: Traceback) -> bool:
    """A traceback logged by a handler at warning level (``logger.warning(..., exc_info=True)``):
    its own lines carry that level, or the record right before it does."""
    k = pos.get(tb.start_line)
    if k is None:
        return False
    # JSON lines share a line: a record's message comes before the traceback it carries
    for j in range(k, len(doc.records)):
        if doc.records[j].line != tb.start_line:
            break
        if doc.records[j].text.rstrip().endswith(TB_HEAD):
            k = j
            break
    own = doc.records[k]
    if own.level:
        return own.level in _HANDLED or (k > 0 and _ignored_by_cpython(doc.records[k - 1]))
    for j in range(k - 1, max(k - 3, -1), -1):
        rec = doc.records[j]
        if _ignored_by_cpython(rec):
            return True
        if rec.stream == tb.stream:
            # a bare traceback right under a warning: the handler's, if the program logged on
            # after it; an uncaught one ends the program's output (a warning that happened to
            # be the line before it proves nothing)
            return (rec.level or "") in _HANDLED and _logged_after(doc, pos, tb)
    return False


def _ignored_by_cpython(rec: Record) -> bool:
    """``rec`` is CPython's "Exception ignored in: ..." above a traceback: an exception it could
    not raise (a ``__del__``'s), printed, and the program went on."""
    return rec.text.startswith("Exception ignored in")


def _logged_after(doc: Document, pos: dict[int, int], tb: Traceback) -> bool:
    """The program logged on after the traceback: the next line of its stream with a level
    is not an error (a launcher's ``failed (exitcode: 1)`` right after says it was uncaught,
    and so does torchrun stopping the other workers, a warning)."""
    k = pos.get(tb.end_line)
    if k is None:
        return False
    for rec in doc.records[k + 1 :]:
        if rec.level and rec.stream == tb.stream:
            return rec.level in _HANDLED_LEVELS and _LAUNCHER_STOPS.search(rec.text) is None
    return False


_LAUNCHER_STOPS = compile_re(r"\bSending process \d+ closing signal SIG[A-Z]+")
"""torchrun's agent stopping the other workers because one of them exited with an error."""


def refused_them_all(doc: Document) -> bool:
    """Two or more requests refused with 4xx in the access log and none answered (a health
    check or a metrics scrape is no request): the server refuses whatever it is sent (no chat
    template, a broken tokenizer), which is its failure, not a client's."""
    refused = 0
    for rec in doc.records:
        if _ANSWERED.search(rec.text) and not probe(rec.text):
            return False
        if _REFUSED.search(rec.text):
            refused += 1
    return refused >= 2


def _client_error(doc: Document, pos: dict[int, int], end: int, etype: str = "") -> bool:
    """The failure was a request the server refused: a validation error (not a bug such as a
    TypeError) answered to the client with a 4xx status right after it. An exception of a
    client library (``openai.BadRequestError``, LiteLLM's) is the failure of the program that
    sent the request, even with the server's access log pasted after it."""
    if etype and (not _VALIDATION_TYPES.search(etype) or etype.startswith(_CLIENT_LIBRARIES)):
        return False
    k = pos.get(end)
    if k is None:
        return False
    return any(
        _CLIENT_ERROR.search(rec.text) and _CLIENT_SIDE not in rec.text
        for rec in doc.records[k + 1 : k + 6]
    )


def _wrapper_follows(doc: Document, pos: dict[int, int], end: int, wrappers: Wrappers) -> bool:
    k = pos.get(end)
    if k is None:
        return False
    return any(wrappers.line(rec.text) for rec in doc.records[k + 1 : k + 4] if rec.text.strip())


def _traceback_after(
    doc: Document, pos: dict[int, int], line: int, stream: str, starts
) -> Traceback | None:
    """The traceback that starts within a few records after ``line`` in the same stream."""
    k = pos.get(line)
    if k is None:
        return None
    for rec in doc.records[k + 1 : k + 5]:
        if rec.stream == stream and (stream, rec.line) in starts:
            return starts[(stream, rec.line)]
    return None


_CHAIN = compile_re(
    r"^(?:During handling of the above exception|The above exception was the direct cause)"
)


def _chained_end(doc: Document, pos: dict[int, int], tbs: list[Traceback], k: int) -> int:
    """End of traceback ``k`` and of the tracebacks chained to it that the parse kept apart
    (a chain whose continuation lost the process tag of its first part)."""
    end = tbs[k].end_line
    for nxt in tbs[k + 1 :]:
        a, b = pos.get(end), pos.get(nxt.start_line)
        if a is None or b is None or not 0 < b - a <= 12:
            break
        if not any(_CHAIN.match(rec.text.strip()) for rec in doc.records[a + 1 : b]):
            break
        end = nxt.end_line
    return end


def _candidates(doc: Document, wrappers: Wrappers, handled: list[tuple[int, int]]) -> list[Origin]:
    """The failures of ``doc`` in order; the (first, last line) of each traceback a handler
    logged is added to ``handled``."""
    out: list[Origin] = []
    pos = _index(doc)
    for n, tb in enumerate(doc.tracebacks):
        if _handled(doc, pos, tb):
            handled.append((tb.start_line, tb.end_line))
            continue
        group = None  # the first line of the exception group whose members come next
        for seg, owner in _segments([tb]):
            exc = seg.exception
            if exc is None or not exc.type or _TEARDOWN.search(exc.type):
                continue
            if AT_SHUTDOWN.search(f"{exc.type}: {exc.message[:400]}"):
                continue  # the interpreter complaining while it tears down after the program ended
            if wrappers.exception(exc) or (exc.nested and _quotes_traceback(exc)):
                continue  # the failure above (or the traceback it quotes) is the one it reports
            if exc.nested and _GROUP.search(exc.type):
                group = owner.start_line if group is None else group
                continue  # an exception group (anyio's TaskGroup): its members, next, failed
            if (
                exc.type == "Exception"
                and not exc.message.strip()
                and _wrapper_follows(doc, pos, owner.end_line, wrappers)
            ):
                continue  # an empty exception whose message the program printed on its own lines
            quoted = quoted_exception(exc)
            if quoted is not None:  # a child's traceback carried in the message, not parsed apart
                k, etype, first = quoted
                out.append(
                    Origin(
                        line=exc.line + k,
                        text=f"{etype}: {first}",
                        stream=owner.stream,
                        kind="exception",
                        type=etype,
                        message=first,
                        start=owner.start_line if group is None else group,
                        end=owner.end_line,
                    )
                )
                break
            client = _client_error(doc, pos, owner.end_line, exc.type)
            lines = exc.message.splitlines()
            first, at = (lines[0] if lines else ""), exc.line
            if not first.strip():  # raise X("\n...") : the message starts on the next line
                for j, detail in enumerate(lines[1:6], 1):
                    if detail.strip():
                        first, at = detail.strip(), exc.line + j
                        break
            elif _VALIDATION.search(exc.type) and len(lines) > 1 and _PYDANTIC.match(first):
                for j, detail in enumerate(lines[1:6], 1):
                    if (
                        detail.strip()
                        and not detail.startswith(("  For further", "    For further"))
                        and ("error" in detail.lower() or "should" in detail or j == 2)
                    ):
                        first, at = detail.strip(), exc.line + j
                        break
            out.append(
                Origin(
                    line=at,
                    text=f"{exc.type}: {first}"
                    if first and at == exc.line
                    else (first or exc.type),
                    stream=owner.stream,
                    kind="exception",
                    type=exc.type,
                    message=exc.message,
                    frame=seg.frames[-1] if seg.frames else None,
                    importing=importing(seg.frames),
                    client=client,
                    start=owner.start_line if group is None else group,
                    end=max(
                        _chained_end(doc, pos, doc.tracebacks, n)
                        if owner is tb
                        else owner.end_line,
                        exc.end_line or exc.line,
                    ),
                )
            )
            break  # the first qualifying exception of a chain is its origin
    starts = {(tb.stream, tb.start_line): tb for tb in doc.tracebacks}
    self_kill = (
        next((r.line for r in doc.records if _SELF_KILL in r.text or _traced_kill(r.text)), None)
        if any(e.kind == "killed" for e in doc.errors)
        else None
    )
    recovered = nccl_recovered(doc, doc.errors)
    for err in doc.errors:
        # a record at FATAL (glog's and c10's "F": the process aborts right after it) is a
        # failure; one at ERROR only when its shape says so
        fatal = err.kind == "level" and err.level == "FATAL"
        if (err.kind == "level" and not fatal) or err.kind in _WRAPPER_KINDS:
            continue
        if AT_SHUTDOWN.search(err.text):
            continue
        if err.line in recovered:
            continue
        if err.kind == "killed" and self_kill is not None and err.line > self_kill:
            continue
        # a line at a quiet level is an error line only when its shape says it fails at any
        # level (Triton's stub failure at INFO); a warning-level one was handled, and so was
        # one that says it is a warning
        if (err.level or "") in _HANDLED or says_warning(err.text, err.level):
            continue
        if wrappers.line(err.text):
            continue
        etype, message = "", err.text
        if err.kind == "exception":
            head, _, rest = err.text.partition(": ")
            etype, message = head, "\n".join([rest, *err.more])
            if _TEARDOWN.search(etype) or wrappers.exception(
                ExceptionInfo(type=etype, message=message, line=err.line)
            ):
                continue
        end = err.line + len(err.more)
        after = _traceback_after(doc, pos, err.line, err.stream, starts)
        if after is not None:  # the message a handler printed right before its traceback
            end = max(end, after.end_line)
        out.append(
            Origin(
                line=err.line,
                text=err.text if etype else " ".join([err.text, *err.more]),
                stream=err.stream,
                kind=err.kind,
                type=etype,
                message=message,
                start=err.line,
                end=end,
                client=_client_error(doc, pos, end, etype or "ValueError"),
            )
        )
    out.sort(key=lambda o: (o.line, o.kind != "exception"))
    return out


@dataclass
class Failures:
    origin: Origin | None
    """The failure that started it all (None: nothing failed, or only refused requests)."""
    recovered: bool
    """The program visibly carried on after every failure."""
    refused: list[Origin]
    """Requests the server refused with 4xx and lived on: handled."""
    handled: list[tuple[int, int]] = field(default_factory=list)
    """(first, last line) of each traceback a handler logged at warning level or below, when
    nothing failed (``origin`` is None)."""
    reported: Origin | None = None
    """When nothing else failed: the first line that reports a failure printed elsewhere (a
    build's ``error: command 'g++' failed``, a server's 500 answer) that the program did not
    carry on from; the failure it reports is not in the log."""
    last_end: int = 0
    """Last line of the last failure (0 when nothing failed)."""
    stop: int | None = None
    """When nothing failed: the line where someone asked the program to stop, if anyone did."""
    hung: Origin | None = None
    """When nothing failed before a Ctrl-C: the wait it interrupted, if the run hung there
    (:func:`tracelens.rulebook.hang.hung_origin`)."""

    @property
    def shown(self) -> Origin | None:
        """The failure the log shows: the origin, else the line that reports one, else the
        wait a Ctrl-C interrupted."""
        if self.origin is not None:
            return self.origin
        return self.reported if self.reported is not None else self.hung


def find_failures(doc: Document, wrappers: Wrappers) -> Failures:
    stop = stop_requested_line(doc)
    handled: list[tuple[int, int]] = []
    found = [c for c in _candidates(doc, wrappers, handled) if not stop or c.line < stop]
    real = [c for c in found if not c.client]
    refused = [c for c in found if c.client]
    if not real:
        return Failures(None, False, refused, handled, _reported(doc, stop, wrappers), stop=stop)
    last_end = max(c.end for c in real)
    # a process that printed no failure of its own, interleaved with a failure's long message
    failing = {c.stream for c in real} | {e.stream for e in doc.errors}
    failing.update(s for tb in doc.tracebacks for s in (tb.stream, *tb.streams))
    elsewhere = (max(c.line for c in real), frozenset(failing))
    recovered = carried_on(doc.records, last_end, elsewhere=elsewhere) and not vital_thread_died(
        doc.records
    )
    if recovered:  # a symptom after the progress (an engine declared dead) ends the run too
        symptom = wrappers.last_symptom(doc, after=last_end)
        recovered = symptom == 0 or carried_on(doc.records, symptom)
    return Failures(real[0], recovered, refused, last_end=last_end)


def _reported(doc: Document, stop: int | None, wrappers: Wrappers) -> Origin | None:
    for err in doc.errors:
        if err.kind not in _WRAPPER_KINDS or (stop and err.line >= stop):
            continue
        # an access log writes a 500 answer at INFO: the level says nothing there
        if (err.kind != "http" and (err.level or "") in _HANDLED_LEVELS) or carried_on(
            doc.records, err.line
        ):
            return None
        cause = logged_cause(doc, err.line)
        if cause is not None:  # what the program logged at error level just before reporting it
            return Origin(
                cause.line,
                cause.text,
                cause.stream,
                "level",
                "",
                cause.text,
                None,
                cause.line,
                err.line,
            )
        return Origin(
            err.line, err.text, err.stream, err.kind, "", err.text, None, err.line, err.line
        )
    words = last_words(doc, stop, wrappers.line)
    if words is None:
        return None
    return Origin(
        words.line, words.text, words.stream, "level", "", words.text, None, words.line, words.line
    )


def find_origin(doc: Document, wrappers: Wrappers) -> tuple[Origin | None, bool]:
    """(the originating failure or None, whether the program recovered from every failure)."""
    f = find_failures(doc, wrappers)
    return f.origin, f.recovered
