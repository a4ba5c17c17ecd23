"""Whether a program carried on after a failure, and which run of a log a line belongs to.

A failure is *recovered* when the program visibly carried on after it: requests answered with
2xx, throughput lines, training loss lines, a server that finished starting, a test session
that passed, in the same run
(a restart is a new run: the one that failed did not carry on). vLLM's engine-core I/O threads
are never carried on after: with one of them dead, no new request is ever answered.
"""

from __future__ import annotations

import re
from typing import Any

from tracelens.models import Diagnosis, Document, ErrorLine, Record
from tracelens.parse.document import warning_record
from tracelens.parse.linesearch import records_matching
from tracelens.pyregex import compile_re
from tracelens.read.prefixes import NCCL_DEBUG
from tracelens.regex import compile_regex

SERVE_REQUEST = r"(?:^|-- )(?:GET|POST|PUT|PATCH|DELETE) /\S* "
"""Ray Serve's request log up to the status: "... proxy 10.0.0.3 <request id> -- POST
/v1/chat/completions 200 812.4ms", its header peeled by the ray-serve envelope (or not, when
the line is wrapped otherwise)."""

_ANSWERED = r'HTTP/\d(?:\.\d)?" 2\d\d\b|' + SERVE_REQUEST + r"2\d\d [\d.]+ms\b"
"""An access-log line of a request answered with success (2xx)."""

_PROGRESS = compile_re(
    _ANSWERED + r"|\b(?:Decode|Prefill) batch[.,]|"
    # vLLM's periodic stats, when they show work done (a stalled engine prints zeros)
    r"\bAvg prompt throughput: (?:[1-9][\d.]*|0\.\d*[1-9]\d*) tokens/s|"
    r"\bAvg prompt throughput: [\d.]+ tokens/s, Avg generation throughput: (?:[1-9][\d.]*|0\.\d*[1-9]\d*) tokens/s|"
    r"\{'loss': |'train_runtime': |\bApplication startup complete\b|"
    r"\bThe server is fired up and ready to roll\b|\bsucceeded\b|"
    # a training loop's progress: "step 100 ... loss", "Epoch: [0][100/625] ... Loss 6.7",
    # "Iter 100: loss = 2.1", "Train: [0/300][100/2502] ... loss"
    # (the loss may be part of a name: detectron2's "iter: 19  total_loss: 2.113  loss_cls: ...")
    r"(?i:\b(?:step|epoch|iter(?:ation)?|train)\b[ =:\[]*\d+\b.*loss)|"
    r"\bexit(?:ing|ed)? with (?:status|code) 0\b|\bcompleted=[1-9]|\bmoving on\b|\bworker continues\b|"
    # DeepSpeed's engine every steps_per_print steps (no loss in it) and its launcher's line for
    # each rank that exited 0
    r"\bstep=\d+, skipped=\d+, lr=|\bProcess \d+ exits successfully\.|"
    # ComfyUI's line after each queued prompt ran to its end ("{:.2f} seconds"; newer: H:MM:SS)
    r"^Prompt executed in (?:[\d.]+ seconds|\d+:\d\d:\d\d)|"
    # Ray Train's and Tune's reporter after each reported result (ray/tune/experimental/output.py
    # from Ray 2.5: "Training finished iteration 3 at 2024-01-02 10:00:00. Total running time")
    r"^(?:Training|Trial \S+) finished iteration \d+ at "
)

_MIN_PROGRESS = 3

_PROBE = compile_re(
    r'(?:"|-- |^)(?:GET|HEAD) /(?:health\w*|ping|metrics|v1/models|models|ready\w*|live\w*|'
    r'get_model_info|get_server_info|-/\w+)(?:[/?][^ "]*)? (?:HTTP/|2\d\d )'
)
"""An answered probe (a load balancer's or Kubernetes' health check, a metrics scrape, the
model list): the server's front end is up, which says nothing of the work behind it."""

_ALL_PASSED = compile_re(
    r"^=+ (?:\d+ (?:passed|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)*"
    r"\d+ passed\b(?:, \d+ (?:skipped|deselected|xfailed|xpassed|warnings?))* in [\d.]+s\b.*=+$|"
    r"^# Out of bounds values : 0 OK\s*$|"
    r"\bworker group successfully finished\. Waiting\b|"
    r"\bLocal worker group finished \((?:WorkerState\.)?SUCCEEDED\)|"
    r"^Successfully installed \S|"
    r"\bJob completed successfully\b|"
    r"^Job '\S+' succeeded\s*$|"  # ray job submit / logs --follow / status
    # Ray Train's reporter when the training function returned (restarts and all); a Tune
    # trial's "completed after" says nothing of the other trials
    r"^Training completed after \d+ iterations at |"
    # NVIDIA's samples and trtexec end with this line when they succeeded ("&&&& FAILED" else)
    r"^&&&& PASSED TensorRT\.\w+"
)
"""A test run's closing summary when nothing failed: pytest's ("== 6 passed, 1 warning in
3.21s =="; "failed" or "error" in it keeps it from matching), whose passing tests may print
tracebacks (expected exceptions, captured output), and nccl-tests' final check ("# Out of bounds
values : 0 OK": every collective returned the right values), after which the warnings NCCL
printed on the way (a transport it could not use and fell back from) stopped nothing; and
torchelastic's agent when every worker of its current attempt exited 0 ("[default] worker group
successfully finished. Waiting 300 seconds for other agents to finish.", "Local worker group
finished (SUCCEEDED)"): a restart after a lost node or a failed worker recovered; and pip's
"Successfully installed ...", after which an install that failed before (a package not found
behind a proxy, then found) was done again and ended well; a job's "Job completed successfully"
(submitit's last line after a preempted, requeued run resumed and finished; job scripts' too);
Ray's "Job 'raysubmit_...' succeeded": the driver finished well, whatever its tasks were retried
after (a worker the memory monitor killed); Ray Train's "Training completed after 20 iterations
at ...", after a node it lost and the restart from its checkpoint; trtexec's "&&&& PASSED
TensorRT.trtexec [TensorRT v8601] # trtexec ...", after the builder's allocation errors for
tactics it then skipped."""


_VITAL_THREAD = compile_re(
    r"Exception in thread [^(\n]*\((?:process_input_sockets|process_output_sockets)\)"
)
"""vLLM's engine core reads requests and writes results on these two threads: with one of them
dead, requests already inside may still be answered, but no new one ever is."""


def answered_request(text: str) -> bool:
    """An access-log line of a request answered with success, not an answered probe."""
    return re.search(_ANSWERED, text) is not None and not probe(text)


def probe(text: str) -> bool:
    """An access-log line of an answered health check, metrics scrape or model list."""
    return _PROBE.search(text) is not None


def vital_thread_died(records: list[Record]) -> bool:
    return any(
        "Exception in thread" in rec.text and _VITAL_THREAD.search(rec.text) for rec in records
    )


def carried_on(
    records: list[Record],
    after: int,
    chunk: int = 256,
    *,
    elsewhere: tuple[int, frozenset[str]] | None = None,
    least: int = _MIN_PROGRESS,
) -> bool:
    """At least a few progress lines after ``after``, in the same run (a restart is a new
    run: the one that failed did not carry on). The lines that may be either are found by one
    RE2 pass over each ``chunk`` lines (:data:`_PROGRESS_OR_START`), each then checked as
    before; a log of many answered requests is decided within its first chunk.

    ``elsewhere`` = (line, streams): a record of a stream not in ``streams`` counts from that
    line on (the failure's exception line), not only after ``after`` (the end of its message):
    another process's lines interleaved with a long message are not part of it, and a
    message may run on with lines its own process printed after (Ray Train's controller).
    ``least``: how many progress lines are enough."""
    seen = 0
    if elsewhere is None:
        tail = [rec for rec in records if rec.line > after]
    else:
        since, streams = elsewhere
        tail = [
            rec
            for rec in records
            if rec.line > after or (rec.line > since and rec.stream not in streams)
        ]
    candidates = compile_regex(_PROGRESS_OR_START, multiline=True)
    for start in range(0, len(tail), chunk):
        part = tail[start : start + chunk]
        for k in records_matching(part, _StartOrProgress, candidates):
            if _RUN_START.search(part[k].text):
                return False
            if _ALL_PASSED.search(part[k].text):
                return True
            if _PROBE.search(part[k].text):
                continue  # a health check answers while the engine behind it is stuck
            seen += 1
            if seen >= least:
                return True
    return False


def made_progress(records: list[Record]) -> bool:
    """Any progress line among ``records`` (an answered probe is none)."""
    candidates = compile_regex(_PROGRESS_OR_START, multiline=True)
    return any(
        not _RUN_START.search(records[k].text) and not _PROBE.search(records[k].text)
        for k in records_matching(records, _StartOrProgress, candidates)
    )


class _StartOrProgress:
    """A line :func:`carried_on` stops at: a run's start or a progress line."""

    @staticmethod
    def search(text: str) -> Any:
        return _RUN_START.search(text) or _PROGRESS.search(text) or _ALL_PASSED.search(text)


_PROGRESS_OR_START = (
    rb"vLLM API server version|server_args=ServerArgs\(|Starting elastic_operator|HTTP/|"
    rb"Avg prompt throughput:| batch[.,]|'train_runtime': |Application startup complete|"
    rb"The server is fired up and ready to roll|succeeded|(?i:loss)|exit|completed=|moving on|"
    rb"worker continues| passed|Out of bounds values|worker group|Prompt executed in|"
    rb", skipped=|Successfully installed|Job completed successfully|' succeeded|(?:^|-- )(?:GET|POST|PUT|PATCH|DELETE) /|"
    rb" finished iteration |Training completed after |&&&& PASSED"
)
"""A literal of each branch of :data:`_RUN_START` and :data:`_PROGRESS` (``loss`` in any case
for the training loops' lines and ``{'loss': ``): it matches in every line they find."""


# one line per start of a program; an engine's own start counts only where no server banner does
_RUN_START = compile_re(
    r"\bvLLM API server version\b|\bserver_args=ServerArgs\(|\bStarting elastic_operator\b"
)
_ENGINE_START = compile_re(r"\bInitializing a V1 LLM engine\b|\bInitializing an LLM engine\b")


def _lines(doc: Document, rx: re.Pattern[str]) -> list[int]:
    """The sorted lines ``rx`` finds, in one RE2 pass over the log (literals and ``\\b``
    next to ASCII letters: RE2 matches wherever Python does)."""
    found = records_matching(doc.records, rx, compile_regex(rx.pattern.encode(), multiline=True))
    return sorted({doc.records[k].line for k in found})


def finished_after(doc: Document, line: int) -> int | None:
    """The line of a finished run's line (:data:`_ALL_PASSED`: every test passed, torchelastic's
    worker group that finished after a restart, a job that succeeded) after ``line``, in the
    same run; None when there is none."""
    span = run_span(doc, line)
    end = span[1] if span is not None else doc.line_count + 1
    return next((n for n in _lines(doc, _ALL_PASSED) if line < n <= end), None)


def run_span(doc: Document, line: int) -> tuple[int, int] | None:
    """The lines of the run (one start of a server or a job) that holds ``line``, when the
    log holds several starts (restarts, appended logs); None when it holds one."""
    starts = _lines(doc, _RUN_START)
    if not starts:
        starts = _lines(doc, _ENGINE_START)
    if len(starts) < 2:
        return None
    begin = 0
    end = doc.line_count + 1
    for s in starts:
        if s <= line:
            begin = s
        elif s > line:
            end = s - 1
            break
    return begin, end


def nccl_recovered(doc: Document, errors: list[ErrorLine]) -> set[int]:
    """The lines of NCCL warnings after which the same process still finished setting up a
    communicator (``Init COMPLETE``): a transport NCCL tried and fell back from (no
    InfiniBand device, a plugin not found), not a failure."""
    warned: dict[str, list[int]] = {}
    for err in errors:
        nccl = err.kind == "nccl" and "NCCL WARN" in err.text
        m = NCCL_DEBUG.search(f"{err.stream} {err.text}") if nccl else None  # a stream if peeled
        if m is not None:
            warned.setdefault(m.group(1), []).append(err.line)
    if not warned:
        return set()
    out: set[int] = set()
    for rec in doc.records:
        if "Init COMPLETE" in rec.text and (m := NCCL_DEBUG.search(f"{rec.stream} {rec.text}")):
            out.update(n for n in warned.get(m.group(1), ()) if n < rec.line)
    return out


def warned_and_carried_on(doc: Document, d: Diagnosis) -> str:
    """How ``d``'s evidence was printed when every line of it was at warning level or below
    (:func:`~tracelens.parse.document.warning_record`), or, for a symptom (a health check that
    failed once), without a level (SGLang logs none), and the program made progress after the
    last of them; else ``""``."""
    lines = {e.line for e in d.evidence}
    records = [r for r in doc.records if r.line in lines]
    if not records or not carried_on(doc.records, max(lines)):
        return ""
    if all(warning_record(r) for r in records):
        return "at warning level or below"
    return "without a level" if d.secondary and all(not r.level for r in records) else ""
