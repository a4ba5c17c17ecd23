"""The envelope table: each format of a line's wrapping (container timestamps, kubectl/compose
prefixes, process tags, logger headers ...) as an anchored regex and what its groups mean, tried
in order by :mod:`tracelens.read.logread`, and the characters each can start with."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from tracelens.pyregex import compile_re


@dataclass(frozen=True)
class Envelope:
    """One envelope format: an anchored regex and what its groups mean."""

    name: str
    regex: str
    """Matched where the line (or the previous envelope) ends."""
    stream_group: str | None = None
    """Group naming the process/stream."""
    level_group: str | None = None
    time_group: str | None = None
    source_group: str | None = None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """:attr:`regex` compiled when a line first tries it: a log tries only the envelopes
        its lines' first characters allow, and Python takes about half a millisecond to
        compile each."""
        return compile_re(self.regex)


LEVEL = r"(?P<level>TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL)"
GLOG_LEVELS = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}
"""glog's level letters (and TensorRT's), and logfmt's lowercase level names ("panic" aborts as
"fatal" does)."""
GLOG_LEVELS.update(
    {n: n.upper() for n in ("trace", "debug", "info", "warning", "error", "fatal")}
    | {"warn": "WARNING", "panic": "FATAL", "V": "DEBUG"}  # TensorRT's verbose
    | {"C": "FATAL"}  # spdlog's critical: Ray's C++ logger's FATAL
)

ENVELOPES: tuple[Envelope, ...] = (
    # a log copied from a web UI with its line numbers: "  1234\t"
    Envelope("line-number", r" *\d{1,7}\t"),
    # syslog / journalctl: "Nov 29 03:14:12 gpu-node-7 python3[48211]: "
    Envelope(
        "syslog",
        (
            r"(?P<t>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}) "
            r"[\w.-]+ (?P<s>[\w.@/-]+(?:\[\d+\])?): "
        ),
        stream_group="s",
        time_group="t",
    ),
    # Open MPI --timestamp-output before its tag: "Thu Jan 23 11:55:50 2025[1,1]<stderr>:"
    Envelope(
        "mpirun-timestamp",
        (
            r"(?P<t>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov"
            r"|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4})(?=\[\d)"
        ),
        time_group="t",
    ),
    # Open MPI --tag-output: "[1,0]<stderr>:"
    # mpirun --tag-output "[1,0]<stderr>:", horovodrun's "[0]<stderr>:", SageMaker's MPI
    # "[1,mpirank:0,algo-1]<stdout>:"
    Envelope(
        "mpirun",
        r"\[(?P<s>\d+(?:,\d+|,mpirank:\d+,[^\]\s]+)?)\]<(?:stdout|stderr|stddiag)>:",
        stream_group="s",
    ),
    # Slurm srun --label: "3: "
    Envelope("srun-label", r"(?P<s>\d{1,4}): (?=\S| {2}|\t)", stream_group="s"),
    # kubectl logs --prefix: "[pod/vllm-0/vllm] "
    Envelope("kubectl-prefix", r"\[(?P<s>pod/[^\]\s]+)\] ", stream_group="s"),
    # docker compose: "vllm03  | "
    Envelope("compose-prefix", r"(?P<s>[A-Za-z0-9][\w.-]*)\s+\| ", stream_group="s"),
    # pdsh / DeepSpeed multi-node launcher: "node-1: ", "ip-10-0-0-5: ", "10.0.0.5: " (a host
    # name ending in "-<digits>" or an address, so "ValueError: ", "python3: " or "collect2: "
    # never match)
    Envelope(
        "pdsh-host",
        r"(?P<s>[A-Za-z][\w-]*-\d+|\d{1,3}(?:\.\d{1,3}){3}): (?=\S| {2}|\[)",
        stream_group="s",
    ),
    # docker --timestamps / kubectl --timestamps: RFC 3339 with nanoseconds; a tab after it in
    # exports that put the time in a column of its own
    Envelope(
        "iso-timestamp",
        r"(?P<t>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)[ \t]",
        time_group="t",
    ),
    # a log exported with the time in a column of its own (CloudWatch, Loki, a spreadsheet):
    # Unix seconds or milliseconds, then a tab: "1714557600123\t"
    Envelope("epoch-tab", r"(?P<t>\d{10}(?:\d{3})?(?:\.\d+)?)\t", time_group="t"),
    # LMCache's logger (lmcache/logging.py, build_format: "[%(asctime)s] LMCache
    # %(levelname)s: %(message)s (%(filename)s:%(lineno)d:%(name)s)"): "[2025-07-01
    # 10:00:00,123] LMCache ERROR: "
    Envelope(
        "lmcache",
        (
            r"\[(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\] LMCache "
            r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL): "
        ),
        level_group="level",
        time_group="t",
    ),
    # SGLang: "[2025-01-20 13:03:50 TP0] " / "[2025-01-20 13:03:50 DP1 TP3] "
    Envelope(
        "sglang",
        (
            r"\[(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?)"
            r"(?: (?P<s>(?:[A-Z]{2,4}\d+)(?: [A-Z]{2,4}\d+)*))?\] "
        ),
        stream_group="s",
        time_group="t",
    ),
    # TensorRT's loggers (trtexec, the Python API's trt.Logger, TensorRT-LLM): the time, the
    # logger, the level letter ("V" verbose): "[09/02/2024-10:14:24] [E] [TRT] ",
    # "[06/20/2022-11:10:38] [TRT] [E] ", "[01/23/2026-04:43:47] [TRT-LLM] [E] "
    Envelope(
        "tensorrt",
        r"\[(?P<t>\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2})\] (?:\[(?P<src>TRT(?:-LLM)?)\] )?"
        r"\[(?P<level>[VIWEF])\] (?:\[TRT\] )?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # LMDeploy's TurboMind logger (src/turbomind/utils/logger.h, check.cc): "[TM][WARNING] ",
    # "[TM][FATAL] kernels/x.cu(212): Check failed: ...", newer releases with the time and the
    # source ("[TM][FATAL][0914.14:00:37.807188][cast.cu:264] ", "[TM][FATAL][buffer.h:70] ")
    Envelope(
        "turbomind",
        r"\[TM\]\[" + LEVEL + r"\](?:\[(?P<t>\d{4}\.\d{2}:\d{2}:\d{2}\.\d+)\])?"
        r"(?:\[(?P<src>[\w./-]+:\d+)\])? ?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # "[2026-11-29T03:14:12Z] " / "[2026-11-29 03:14:12.123] "
    Envelope(
        "bracket-timestamp",
        r"\[(?P<t>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\] ",
        time_group="t",
    ),
    # detectron2 / fvcore loggers (month/day time, logger name): on the terminal
    # "[11/23 14:09:17 d2.engine.hooks]: ", warnings and errors led by their level
    # ("WARNING [11/23 14:09:17 d2.checkpoint.c2_model_loading]: "); in its log.txt file
    # "[11/23 14:09:17] d2.engine.hooks INFO: "
    Envelope(
        "detectron2",
        r"(?:(?P<level>WARNING|ERROR) )?\[(?P<t>\d{2}/\d{2} \d{2}:\d{2}:\d{2}) (?P<src>[A-Za-z_][\w.]*)\]: ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    Envelope(
        "detectron2-file",
        r"\[(?P<t>\d{2}/\d{2} \d{2}:\d{2}:\d{2})\] (?P<src>[A-Za-z_][\w.]*) " + LEVEL + r": ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # vLLM / Ray process tags: "(EngineCore_DP0 pid=245) ", "(VllmWorker rank=1 pid=9) ",
    # "(RayWorkerWrapper pid=77, ip=10.0.0.2) ", "(APIServer pid=1) ", "(pid=77) "
    Envelope(
        "process-tag",
        (
            r"\((?P<s>(?:[A-Za-z_][\w.:-]*(?: rank=\d+| [A-Z]{2,4}\d+)? )?pid=\d+(?:, ip=[\w.:-]+)?"
            r"(?:, [\w ]+=[^)]*)?)\) "
        ),
        stream_group="s",
    ),
    Envelope(
        "ray-daemon",
        r"\((?P<s>raylet|gcs_server|autoscaler|monitor)[^)]*\) ",
        stream_group="s",
    ),
    # torchrun: "[rank3]: " / "[default0]:"
    Envelope("torchrun-rank", r"\[(?P<s>rank\d+)\]: ?", stream_group="s"),
    Envelope("torchrun-default", r"\[(?P<s>default\d+)\]:", stream_group="s"),
    # vLLM logger: "ERROR 01-20 13:03:50 [core.py:700] " and the relative-path form
    # "ERROR 01-20 13:03:50 [v1/executor/multiproc_executor.py:749] "
    Envelope(
        "vllm-logger",
        LEVEL + r" (?P<t>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) \[(?P<src>[^\]\s]+)\] ?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # Ray Serve's components (ServeFormatter, ray/serve/_private/logging_utils.py): the level,
    # the time, the component and its id, a request's id and fields, then "-- ": "INFO
    # 2025-08-29 18:01:08,611 controller 525709 -- ", a replica's request log "INFO ...
    # default_LLMRouter bvvqsqc0 9f1c3e7a-... -- POST /v1/chat/completions 200 1874.3ms";
    # older Ray the file and line instead: "... default_Model ujj4diu5 replica.py:893 - "
    Envelope(
        "ray-serve",
        (
            LEVEL
            + r" (?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) (?P<src>[\w.:-]+) [\w.:/-]+ "
            r"(?:[^\s-]\S* ){0,4}?(?:-- |[\w.-]+\.py:\d+ - )"
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # older vLLM logger, without the bracket: "ERROR 10-18 16:04:07 multiproc_worker_utils.py:229] "
    Envelope(
        "vllm-logger-old",
        LEVEL + r" (?P<t>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) (?P<src>[\w./-]+\.py:\d+)\] ?",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # glog (c10d, NCCL watchdog): "E0120 13:03:50.123456 1234 ProcessGroupNCCL.cpp:1234] "
    Envelope(
        "glog",
        r"(?P<level>[IWEF])(?P<t>\d{4} \d{2}:\d{2}:\d{2}\.\d+)\s+\d+ (?P<src>[\w./-]+:\d+)\] ",
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # c10 (PyTorch C++) in brackets: "[E1129 15:53:15.897998298 socket.cpp:1028] ",
    # "[W601 10:00:03.512 ProcessGroupNCCL.cpp:4561] "
    Envelope(
        "c10-bracket",
        (
            r"\[(?P<level>[IWEF])(?P<t>\d{3,4} \d{2}:\d{2}:\d{2}(?:\.\d+)?)(?: \d+)? (?P<src>[\w./-]+:\d+)\] ?"
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # Ray's C++ logger (src/ray/util/logging.cc, spdlog pattern "[%Y-%m-%d %H:%M:%S,%e %L %P
    # %t] %v": time, spdlog's level letter, pid, thread id) at its FATAL, "C" (RAY_LOG(FATAL), a
    # failed RAY_CHECK): "[2025-09-16 09:13:19,904 C 597 647] task_receiver.cc:181: ...". Its
    # other levels stay as they are: the raylet logs at "E" what it goes on from (a disk over
    # its threshold, a worker it could not reach)
    Envelope(
        "ray-cpp-fatal",
        r"\[(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) (?P<level>C) \d+ \d+\] ",
        level_group="level",
        time_group="t",
    ),
    # loguru and similar: "2025-06-01 10:00:00.123 | ERROR    | app.server:run:42 - "
    Envelope(
        "pipe-level",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?) \| "
            + LEVEL
            + r"\s*\| (?P<src>[\w.:<>-]+) - "
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # a level in brackets after a timestamp was peeled: "[ERROR] ", DeepSpeed's "[INFO] "
    Envelope("bracket-level", r"\[" + LEVEL + r"\]\s+", level_group="level"),
    # DeepSpeed's source after the level: "[partition_parameters.py:347:__exit__] "
    Envelope(
        "bracket-source",
        r"\[(?P<src>[\w./-]+\.py:\d+(?::[\w<>]+)?)\] ",
        source_group="src",
    ),
    # KServe's model servers (kserve/logging.py: "%(asctime)s.%(msecs)03d %(process)s %(name)s
    # %(levelname)s [%(filename)s:%(funcName)s():%(lineno)s] %(message)s", and uvicorn's loggers
    # under it with "%(levelprefix)s"): "2024-09-05 14:21:37.902 1 kserve ERROR [__main__.py:<module>():259] "
    Envelope(
        "kserve",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \d+ (?P<src>[A-Za-z_][\w.]*) "
            + LEVEL
            + r"(?: \[[^\]\s]+\] |:\s+)"
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # Python logging, "%(asctime)s - %(name)s - %(levelname)s - %(message)s", or without the name
    Envelope(
        "python-asctime",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?) - (?:(?P<src>[\w.]+) - )?"
            + LEVEL
            + r" - "
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # PyTorch's own log format (torch 2.1-2.2), after its bracketed time:
    # "[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] "
    Envelope(
        "logger-bracket-level",
        r"(?P<src>[A-Za-z_]\w*(?:\.\w+)+): \[" + LEVEL + r"\] ?",
        level_group="level",
        source_group="src",
    ),
    # Python logging basicConfig: "ERROR:root:", "WARNING:transformers.modeling_utils:"
    Envelope(
        "python-logging",
        LEVEL + r":(?P<src>[\w.-]+):",
        level_group="level",
        source_group="src",
    ),
    # pytest's failure report: the exception and its message on "E   " lines, indented to the
    # failing source line ("E       ValueError: bad shape")
    Envelope("pytest-e", r"E(?: {3,}(?=\S)| +$)"),  # a blank "E" line too
    # AITER's failed JIT build logs its traceback as "-->".join(traceback.format_exception()):
    # "-->[History]: Traceback (most recent call last):", "-->  File ...", "-->KeyError: 'x'",
    # and a bare "-->" before a chain's "The above exception ..." line
    Envelope(
        "aiter-history",
        r"-->(?:\[History\]: )?(?=Traceback \(most recent call last\):|  File \"|[A-Za-z_][\w.]*(?::|$)|$)",
    ),
    # uvicorn: "INFO:     127.0.0.1:51234 - ...", "ERROR:    Exception in ASGI application"
    Envelope("uvicorn", LEVEL + r":\s+", level_group="level"),
    # Rust's tracing (TGI's launcher and router, TEI, SGLang's router, Dynamo), after its time:
    # " INFO shard-manager: text_generation_launcher: ", " WARN text_generation_router_v3::backend:
    # backends/v3/src/backend.rs:39: " (its spans, the crate's module path, the source file; a
    # span with fields, "http_request{... status_code=503}: ", stays: its fields say what failed)
    Envelope(
        "rust-tracing",
        (
            r"\s*(?P<level>TRACE|DEBUG|INFO|WARN|ERROR)\s+(?:[\w-]+: )*"
            r"(?P<src>[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:::\w+)*|[a-z]\w*(?:::\w+)+): "
            r"(?:[\w./-]+\.rs:\d+: )?"
        ),
        level_group="level",
        source_group="src",
    ),
    # logfmt (Go's logrus: containerd, the NVIDIA container toolkit, dcgm-exporter, Docker):
    # 'time="2025-01-09T00:28:10Z" level=error msg="..."', the message keeps its quotes
    Envelope(
        "logfmt",
        r'(?:time="(?P<t>[^"]*)" )?level=(?P<level>trace|debug|info|warning|warn|error|fatal|panic) msg=',
        level_group="level",
        time_group="t",
    ),
    # TensorFlow's C++ logging (tsl), also XLA's (torch_xla, JAX) and Horovod's, which puts it in
    # brackets: "2023-06-26 07:22:58.476822: W tensorflow/.../dso_loader.cc:64] ",
    # "[2023-06-26 07:22:58.476822: W /tmp/.../horovod/common/stall_inspector.cc:107] "
    Envelope(
        "tsl-logger",
        (
            r"\[?(?P<t>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}): (?P<level>[IWEF]) "
            r"(?P<src>[\w./-]+:\d+)\] ?"
        ),
        level_group="level",
        time_group="t",
        source_group="src",
    ),
    # Generic "2025-01-20 13:03:50,123 INFO ..." / "[2025-01-20 13:03:50] ERROR ..."; the time
    # alone (a logging datefmt of "%H:%M:%S", kohya_ss's "17:22:50-122539 ERROR    "), or after a
    # day/month/year date (rich's RichHandler: "[12/01/24 17:22:50] ERROR    ")
    Envelope(
        "timestamp-level",
        (
            r"\[?(?P<t>(?:\d{4}-\d{2}-\d{2}[ T]|\d{2}/\d{2}/\d{2}(?:\d{2})? )?\d{2}:\d{2}:\d{2}"
            r"(?:[.,]\d+|-\d{6})?)\]?\s+\[?" + LEVEL + r"\]?:?\s+"
        ),
        level_group="level",
        time_group="t",
    ),
    # the level in lowercase brackets, the message right after them (serverless workers' logs:
    # "2025-10-09 08:58:51.240 [error]Please install vllm[audio] for audio support")
    Envelope(
        "timestamp-level-lower",
        (
            r"(?P<t>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\s+"
            r"\[(?P<level>trace|debug|info|warning|warn|error|fatal)\]\s*"
        ),
        level_group="level",
        time_group="t",
    ),
)

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ALNUM = _UPPER + _UPPER.lower() + "0123456789"
# The characters each envelope can start with: a line is only tried against the envelopes its
# next character allows (most traceback and message lines try none).
FIRST_CHARS = {
    "line-number": " 0123456789",
    "syslog": "ADFJMNOS",
    "mpirun-timestamp": "FMSTW",
    "mpirun": "[",
    "srun-label": "0123456789",
    "kubectl-prefix": "[",
    "compose-prefix": _ALNUM,
    "pdsh-host": _ALNUM,
    "iso-timestamp": "0123456789",
    "epoch-tab": "0123456789",
    "lmcache": "[",
    "sglang": "[",
    "tensorrt": "[",
    "turbomind": "[",
    "bracket-timestamp": "[",
    "detectron2": "[WE",
    "detectron2-file": "[",
    "process-tag": "(",
    "ray-daemon": "(",
    "torchrun-rank": "[",
    "torchrun-default": "[",
    "vllm-logger": "TDINWECF",
    "vllm-logger-old": "TDINWECF",
    "ray-serve": "TDINWECF",
    "glog": "IWEF",
    "c10-bracket": "[",
    "ray-cpp-fatal": "[",
    "kserve": "0123456789",
    "python-asctime": "0123456789",
    "pipe-level": "0123456789",
    "bracket-level": "[",
    "bracket-source": "[",
    "logger-bracket-level": _UPPER + _UPPER.lower() + "_",
    "python-logging": "TDINWECF",
    "uvicorn": "TDINWECF",
    "logfmt": "tl",
    "pytest-e": "E",
    "aiter-history": "-",
    "timestamp-level": "[0123456789",
    "tsl-logger": "0123456789[",
    "rust-tracing": " TDIWE",
    "timestamp-level-lower": "0123456789",
}
