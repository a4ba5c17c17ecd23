"""Never silent on a failure: the rules' diagnoses settled against the originating failure.

- No cause rule explains the originating failure: the first diagnosis is an *unrecognized
  failure* that quotes it (line, process, raising frame, whole message) and gives the next
  steps (the nearest known failures, a search of the upstream tracker, a rule scaffold).
- The program carried on after every failure (a handled error, a retried request, an automatic
  batch-size search): error-level diagnoses become warnings, with a note saying so.
- Symptoms (a process died, a wrapper re-raised) point at the originating failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tracelens.models import (
    ERROR_LEVEL,
    Diagnosis,
    Document,
    Evidence,
    ExceptionInfo,
    Record,
    Remedy,
)
from tracelens.regex import compile_regex, found
from tracelens.rulebook.guess import guess_category
from tracelens.rulebook.origin import Failures, Origin, refused_them_all
from tracelens.rulebook.progress import (
    answered_request,
    finished_after,
    warned_and_carried_on,
)
from tracelens.rulebook.tracker import search_url

if TYPE_CHECKING:  # the nearest-failure module is imported only for a failure no rule knows
    from tracelens.rulebook.nearest import Near
    from tracelens.rulebook.words import Answer

RULE_ID = "unrecognized"
_SAY_RESEMBLES = 70.0
"""Score from which the nearest known failure is named in a note (its category is taken only
from the higher threshold of ``tracelens.rulebook.nearest``; below this the remedies still list
it among the nearest)."""


def explains(diag: Diagnosis, origin: Origin) -> bool:
    """The diagnosis's evidence holds the originating failure: one of its lines, or the same
    message printed again elsewhere (a traceback whose chain lost its process tag)."""
    if any(origin.covers(e.line) for e in diag.evidence):
        return True
    lines = [
        ln.strip()[:80]
        for ln in (origin.message or origin.text).splitlines()
        if len(ln.strip()) >= 24
    ]
    return any(ln in e.text for ln in lines for e in diag.evidence)


def choose_category(
    origin: Origin,
    near: list[Near],
    threshold: float,
    words: Answer | None = None,
) -> tuple[str, Near | None]:
    """(category, the nearest known failure it came from or None): the nearest known failure's
    when it resembles it closely, else what the failure's kind and words say (the guess), and
    where the guess has nothing specific, the category the words of known failures give an
    exception (``words``, from ``tracelens.rulebook.words``); docs/unrecognized.md has the
    figures."""
    best = near[0] if near else None
    close = [n.category for n in near if n.score >= threshold]
    if best is not None and close and all(c == best.category for c in close):
        # (known failures of several categories as close: their text does not tell them apart,
        # as a launcher's "failed (exitcode: -9) ..." line, numbers left out, does not)
        return best.category, best
    guessed = guess_category(origin, framework_checks=False)
    if guessed != "unrecognized":
        return guessed, None
    if words is not None and origin.type:
        return words.category, None  # an exception's words
    last = guess_category(origin)
    if last == "unrecognized" and words is not None and origin.kind not in _REPORTS:
        # a failure line without an exception type (a launcher's, a container runtime's, a
        # library's error line) that nothing else names, when its words are enough to go by
        return (words.category if words.known >= _LINE_WORDS else last), None
    return last, None


_LINE_WORDS = 5
"""The features a bare failure line's words must share with known failures for the words to
name its category ("exit status 1" or "request failed with status 500" say nothing of it)."""
_REPORTS = frozenset({"http", "tests"})
"""Failure lines that only report a failure told elsewhere (a server's 5xx answer, a test
runner's summary): their words are the report's, never the failure's."""


def _refusals(d: Diagnosis, failures: Failures) -> list[Origin]:
    """The requests the server refused with 4xx whose lines ``d`` holds."""
    return [r for r in failures.refused if explains(d, r)]


def _refused_after(
    diags: list[Diagnosis], causes: list[Diagnosis], failures: Failures
) -> list[Diagnosis]:
    """``diags`` with each error-level diagnosis of a request the server refused with 4xx (and
    not of the failure that started it all) made a warning and put after the causes: a client's
    mistake the server answered is never the first diagnosis of a log whose server then failed."""
    refused = [
        d
        for d in diags
        if d not in causes
        and not d.secondary
        and d.severity in ERROR_LEVEL
        and _refusals(d, failures)
    ]
    for d in refused:
        d.severity = "warning"
        d.notes.insert(
            0,
            "The server refused this request with a 4xx status and kept serving: the client's "
            "error, not the failure that stopped it.",
        )
    return [d for d in diags if d not in refused] + refused if refused else diags


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def raised_last(doc: Document, origin: Origin) -> ExceptionInfo | None:
    """The exception a chain that starts with ``origin`` ended in ("The above exception was the
    direct cause of the following exception": TRL's "ConnectionError: The vLLM server can't be
    reached ..." over the ConnectionRefusedError it caught), when it is another exception."""
    if origin.kind != "exception":
        return None
    for tb in doc.tracebacks:
        if tb.stream == origin.stream and tb.start_line <= origin.line <= tb.end_line:
            last = tb.segments[-1].exception if tb.segments else None
            if last is not None and last.line > origin.line and last.type:
                return last
            return None
    return None


def unrecognized(
    origin: Origin,
    near: list[Near],
    threshold: float,
    log_file: str,
    words: Answer | None = None,
    last: ExceptionInfo | None = None,
) -> Diagnosis:
    """The diagnosis of a failure no rule knows; ``last``: the exception the program finally
    raised for it, when the failure is the first of a chain (:func:`raised_last`)."""
    from tracelens.rulebook.nearest import package_of

    package = package_of(origin)
    category, close = choose_category(origin, near, threshold, words)
    where = ""
    if origin.frame is not None and origin.frame.function:
        where = (
            f", raised in {origin.frame.function} ({origin.frame.file}, line {origin.frame.lineno})"
        )
    proc = f" in {origin.stream}" if origin.stream and origin.stream != "main" else ""
    if origin.hang is not None and origin.frame is not None:
        f = origin.frame
        headline = f"the run hung in {f.function} ({f.module}) until it was interrupted"
        root = (
            f"No rule recognizes this failure. The run made no progress and was interrupted at "
            f"line {origin.line}{proc} while it still waited in {f.function} ({f.file}, line "
            f"{f.lineno}): it hung there."
        )
    else:
        headline = _short(origin.text, 160)
        root = (
            f"No rule recognizes this failure. The failure that started it is at line {origin.line}"
        )
        root += f"{proc}: {_short(origin.text)}{where}"
        root += "" if root.endswith((".", "!", "?")) else "."
    said = ""
    if last is not None:
        said = (
            f"{last.type}: {last.message.strip().splitlines()[0]}"
            if last.message.strip()
            else last.type
        )
        root += f" The program reported it as {_short(said, 240)} (line {last.line})."
    notes = []
    full = origin.message if origin.type else origin.text
    if "\n" in full.strip():
        notes.append(
            "The whole message: "
            + " ⏎ ".join(line.strip() for line in full.strip().splitlines()[:12])
        )
    like = near[0] if near else None
    if like is not None and like.score >= _SAY_RESEMBLES:
        notes.append(
            f"It resembles {like.rule_id} ({like.score:.0f} %), a known failure of category "
            f"{like.category}: read that rule (`tracelens explain {like.rule_id}`) to see whether it applies."
        )
    lo, hi = origin.start, max(origin.end, origin.line)
    remedies = [
        Remedy(
            title=f"Read the failure at line {origin.line} and the lines around it",
            steps=[f"It is the earliest failure in the log that no other failure reports{where}."]
            + (
                ["Everything after it (a process died, an engine stopped) is what it caused."]
                if lo > 1 or hi < origin.line
                else []
            ),
            commands=[f"sed -n '{max(lo - 5, 1)},{hi + 5}p' {log_file}"],
        )
    ]
    if near:
        remedies.append(
            Remedy(
                title="Compare it with the nearest known failures",
                steps=[f"{n.rule_id} ({n.category}, {n.score:.0f} % alike)" for n in near],
                commands=[f"tracelens explain {n.rule_id}" for n in near[:2]],
            )
        )
    remedies.append(
        Remedy(
            title="Search the upstream tracker for this message",
            steps=[
                "Numbers, paths and ids are left out of the query, so reports from other setups match too."
            ],
            commands=[search_url(origin, package)],
        )
    )
    remedies.append(
        Remedy(
            title="Once the cause is known, turn this log into a rule",
            steps=[
                "The scaffold holds a condition on this exception and this log as its example; fill in the cause and the remedies, then run `tracelens rules test`."
            ],
            commands=[f"tracelens rules new my-rules/{category}/NAME --from {log_file}"],
        )
    )
    text = origin.text if len(origin.text) <= 400 else origin.text[:399] + "…"
    evidence = [Evidence(line=origin.line, text=text, why="the originating failure")]
    if origin.frame is not None and origin.frame.line and origin.frame.line != origin.line:
        f = origin.frame
        evidence.append(
            Evidence(
                line=f.line,
                text=f'File "{f.file}", line {f.lineno}, in {f.function}',
                why="the frame that raised it",
            )
        )
    if last is not None:
        evidence.append(
            Evidence(line=last.line, text=_short(said, 400), why="what the program raised for it")
        )
    evidence.sort(key=lambda e: e.line)
    return Diagnosis(
        rule_id=RULE_ID,
        title=f"Unrecognized failure: {headline}",
        category=category,
        severity="error",
        confidence=round(
            0.3
            + (0.25 * (close.score - threshold) / (100 - threshold) if close else 0.0)
            + (0.05 if close else 0.0),
            2,
        ),
        secondary=False,
        root_cause=root,
        notes=notes,
        remedies=remedies,
        evidence=evidence,
        references=[],
    )


_SERVER_ERROR = r'HTTP/\d(?:\.\d)?" 5\d\d\b'
"""An access-log line of a request answered with a server error (5xx)."""
_ANSWER_WITHIN = 3
"""Records after a handler's logged traceback among which its 5xx answer is looked for."""
_ESCAPED_APP = r"Exception in ASGI application|Error in ASGI Framework"
"""The ASGI server's line above an exception that escaped the application (uvicorn,
Hypercorn): no handler of the server caught it."""


def _around(doc: Document, origin: Origin, within: int = 40) -> list[Record]:
    """The records from right before the originating failure to ``within`` lines after it:
    where a server says what became of the request it failed in."""
    return [r for r in doc.records if origin.start - 3 <= r.line <= origin.end + within]


def _answered_5xx(near: list[Record], origin: Origin) -> int | None:
    """The line of the 5xx answer to a request whose exception escaped the server's
    application (the ASGI server's own line right above its traceback): an access log's
    server error among ``near`` (:func:`_around`: a server may log the answer first). A
    handler that logged the exception itself and answered 5xx caught it: only a rule that knows
    the failure keeps it an error then (:func:`_handler_answered_5xx`)."""
    escaped = compile_regex(_ESCAPED_APP)  # (compiled on first use, as every table here)
    if not any(found(escaped, r.text) for r in near if r.line <= origin.start):
        return None
    answer = compile_regex(_SERVER_ERROR)
    return next((r.line for r in near if found(answer, r.text)), None)


def _handler_answered_5xx(doc: Document, origin: Origin) -> int | None:
    """The line of a 5xx answer among the first records after the originating traceback, which
    the server's handler logged itself (no ASGI server's line above it): the handler caught the
    exception and answered the request with a server error."""
    answer = compile_regex(_SERVER_ERROR)
    after = [r for r in _around(doc, origin) if r.line > origin.end][:_ANSWER_WITHIN]
    return next((r.line for r in after if found(answer, r.text)), None)


def _request_failed(how: str) -> str:
    return (
        f"The server kept serving after this failure, but the request it happened in failed: {how}"
    )


def _served_after(doc: Document, origin: Origin, last_end: int) -> bool:
    """The originating failure escaped the server's application and was answered with a 5xx,
    and the server answered a later request with success after the last failure (a health check
    is no such request): that request failed, the server did not."""
    if _answered_5xx(_around(doc, origin), origin) is None:
        return False
    return any(r.line > last_end and answered_request(r.text) for r in doc.records)


_STREAM_ERROR = r"Error in (?:chat )?completion stream generator"
"""vLLM's line above the traceback of an exception that broke a streamed answer: the server
ends that stream with an error event (its access line said 200 when the stream began)."""


def _stream_broken(near: list[Record], origin: Origin) -> int | None:
    """The line of vLLM's notice that the originating exception broke a streamed answer (right
    above its traceback, or the failure line itself), or None."""
    broken = compile_regex(_STREAM_ERROR)
    return next((r.line for r in near if r.line <= origin.start and found(broken, r.text)), None)


def _finished(doc: Document, d: Diagnosis) -> int | None:
    """The line where the run finished after ``d``'s last evidence (a restarted worker group
    that then succeeded), or None."""
    return finished_after(doc, max(e.line for e in d.evidence)) if d.evidence else None


def _only_in(d: Diagnosis, spans: list[tuple[int, int]]) -> bool:
    """Every evidence line of ``d`` lies inside one of the (first, last line) spans."""
    return bool(d.evidence and spans) and all(
        any(a <= e.line <= b for a, b in spans) for e in d.evidence
    )


def settle(doc: Document, diags: list[Diagnosis], failures: Failures, near_fn) -> list[Diagnosis]:
    """The final list: refused requests and recovered failures downgraded, an unrecognized
    failure named, symptoms pointed at the origin. ``near_fn(origin)``: the known failures
    nearest it, the score from which the nearest names its category, and the category the
    words of known failures give it (or None)."""
    origin, recovered = failures.origin, failures.recovered
    # a server that lived on after a failure it answered with a 5xx, or that broke a stream,
    # still failed that request
    answer = stream = None
    if recovered and origin is not None:
        around = _around(doc, origin)
        answer = _answered_5xx(around, origin)
        stream = _stream_broken(around, origin) if answer is None else None
    recovered = recovered and answer is None and stream is None
    if origin is None and not diags and failures.reported is not None:
        origin = failures.reported  # never silent: what reports a failure, when nothing else does
    elif origin is None and not diags and failures.refused and refused_them_all(doc):
        origin = failures.refused[0]  # a server that refuses every request fails, not its clients
    elif origin is None and failures.hung and not any(d.severity in ERROR_LEVEL for d in diags):
        origin = failures.hung  # stopped while it hung: a failure with no error line
    if origin is None:
        for d in diags:
            refused = _refusals(d, failures)
            if refused and d.severity in ERROR_LEVEL and refused_them_all(doc):
                d.notes.insert(
                    0,
                    f"The server refused every request it was sent (the first at line {refused[0].line}) and answered none: it cannot serve as configured, this is not one client's mistake.",
                )
            elif refused and d.severity in ERROR_LEVEL:
                d.severity = "warning"
                d.notes.insert(
                    0,
                    f"The server refused this request (line {refused[0].line}) with a 4xx status and kept serving: the client's error, not a failure of the server.",
                )
            elif d.severity in ERROR_LEVEL and _only_in(d, failures.handled):
                d.severity = "warning"
                d.notes.insert(
                    0,
                    f"The program logged this traceback as a warning (line {d.evidence[0].line}) and nothing failed after it: it was caught and handled, not fatal.",
                )
            elif d.severity in ERROR_LEVEL and not d.degrades and (done := _finished(doc, d)):
                d.severity = "warning"
                d.notes.insert(
                    0,
                    f"The run finished after this (line {done}), with nothing failed that it did not recover from: it did not end the run.",
                )
            elif (
                d.severity in ERROR_LEVEL
                and not d.degrades
                and (how := warned_and_carried_on(doc, d))
            ):
                d.severity = "warning"
                d.notes.insert(
                    0,
                    f"The program printed this {how} and carried on after it (it answered requests or made progress afterwards), and nothing failed: it did not stop the run.",
                )
        return diags
    causes = [d for d in diags if not d.secondary and explains(d, origin)]
    if recovered:
        failed = _handler_answered_5xx(doc, origin)
        for d in diags:
            if failed is not None and d.severity in ERROR_LEVEL and d in causes:
                # a rule that knows this failure as an error of the server, which answered the
                # request with a server error: that request failed, whatever came after it
                d.notes.insert(
                    0, _request_failed(f"it was answered with a server error at line {failed}.")
                )
                continue
            if d.severity in ERROR_LEVEL and not d.degrades:
                d.severity = "warning"
                d.notes.insert(
                    0,
                    "The program carried on after this failure (it answered requests or made progress afterwards and nothing failed later): it was handled, not fatal.",
                )
        return diags
    served: bool | None = None
    for d in causes:
        if d.severity not in ERROR_LEVEL:  # a warning that led to the failure
            if served is None:
                served = _served_after(doc, origin, failures.last_end)
            if served:  # a rule that knows the failure as one request's (the client's input)
                d.notes.insert(
                    0,
                    f"The server answered this request with a server error and answered later ones with success: the request failed (line {origin.line}), the server did not.",
                )
                continue
            d.severity = "error"
            d.notes.insert(
                0,
                f"This warning led to the failure at line {origin.line}: {_short(origin.text, 200)}",
            )
    served_on = _request_failed(
        f"it was answered with a server error at line {answer}."
        if answer is not None
        else f"its streamed answer was ended with an error event (line {stream})."
    )
    if causes:
        if answer is not None or stream is not None:
            causes[0].notes.insert(0, served_on)
        return _refused_after(diags, causes, failures)
    primaries = [d for d in diags if not d.secondary and d.severity in ERROR_LEVEL]
    log_file = doc.source if doc.source and doc.source not in ("-", "<stdin>") else "crash.log"
    near, threshold, words = near_fn(origin)
    un = unrecognized(origin, near, threshold, log_file, words, raised_last(doc, origin))
    if answer is not None or stream is not None:
        un.notes.insert(0, served_on)
    what = _short(origin.text)
    for d in diags:
        if d.secondary:
            d.notes.insert(
                0,
                f"This reports a failure no rule recognizes, at line {origin.line}: {what}. See the unrecognized failure above.",
            )
            if not any(e.line == origin.line for e in d.evidence):
                d.evidence = sorted(
                    [
                        *d.evidence,
                        Evidence(
                            line=origin.line, text=what, why="the failure this symptom reports"
                        ),
                    ],
                    key=lambda e: e.line,
                )
    if primaries and not _waited_on(primaries, origin):
        # a rule found a cause elsewhere: keep it first, name the origin right after
        k = diags.index(primaries[-1]) + 1
        return [*diags[:k], un, *diags[k:]]
    return [un, *diags]


def _waited_on(primaries: list[Diagnosis], origin: Origin) -> bool:
    """Every cause a rule found is a collective that timed out waiting, with all its evidence
    after the originating failure: the ranks that time out wait for the one that failed first
    (a crash no rule knows), so that failure goes first."""
    return all(
        d.category == "nccl-error"
        and "timeout" in d.rule_id
        and d.evidence
        and min(e.line for e in d.evidence) > origin.end
        for d in primaries
    )
