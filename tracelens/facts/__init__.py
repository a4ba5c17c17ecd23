"""Facts about the run, each with the line it came from.

A table of extractors, each a cheap literal trigger and a regex (or a function for structured
payloads: vLLM's engine config, ``non-default args``, ``AttentionSelectorConfig(...)``, the
attention selector's ``Reasons: {...}`` map, torchrun's root-cause block). Every regex is RE2
(linear time) and the ``key=value`` payload reader is a linear scan, so no line, however long
or odd, makes extraction slow.

>>> from tracelens.read.logread import records_from_text
>>> fs, _ = extract(records_from_text("INFO 01-20 13:03:40 [api_server.py:1] vLLM API server version 0.16.0"))
>>> [(f.name, f.value) for f in fs]
[('vllm_version', '0.16.0')]
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import cache
from itertools import accumulate
from typing import Any

from tracelens.facts.extractors import EXTRACTORS, Extractor  # noqa: F401  (the table)
from tracelens.facts.payloads import (  # noqa: F401  (_kv_pairs: part of this module's interface)
    _GPU_CC,
    _MODEL_PATH,
    CUDAGRAPH,
    WATCHDOG,
    _args_dict,
    _capability_pair,
    _cli,
    _cudagraph,
    _engine_config,
    _kv_pairs,
    _reasons,
    _selector,
    _sglang_args,
    _short,
    _watchdog,
    collectives_differ,
)
from tracelens.models import Fact, Record
from tracelens.regex import compile_regex

_Out = list[Fact]

_ROOT_CAUSE_FACTS = frozenset({"failed_rank", "exit_code", "signal", "host"})

# Engine-config keys worth keeping, and the fact names they map to.
_SPECIAL: tuple[tuple[str, Callable[..., None]], ...] = (
    ("ServerArgs(", _sglang_args),
    ("with config:", _engine_config),
    ("args: ", _args_dict),
    ("serve", _cli),
    ("launch_server", _cli),
    ("api_server", _cli),
    ("apability", _capability_pair),
    (WATCHDOG, _watchdog),
    (CUDAGRAPH, _cudagraph),
)


# Literal-bytes regexes of the lines that carry facts, for the large-log scanner
# (tracelens.read.scan): every specific extractor trigger, and the openings of the structured
# payloads and tables the special parsers read.
SCAN_PATTERNS: tuple[bytes, ...] = (
    *sorted({re.escape(t).encode() for e in EXTRACTORS if e.scan for t in e.triggers}),
    rb"ServerArgs\(",
    rb"server_args",
    rb"with config:",
    rb"non-default args",
    rb"args: Namespace",
    rb"launch_server",
    rb"vllm serve",
    rb"NVIDIA-SMI",
    rb"Nvidia driver version",
    rb"Collecting environment",
    rb"Root Cause",
    rb"\[pip3\]",
    rb"GPU \d+:",
)


def extract(records: Iterable[Record]) -> tuple[list[Fact], dict[str, dict]]:
    """All facts in the records, and the structured payloads found in messages."""
    out: _Out = []
    payloads: dict[str, dict] = {}
    root_cause_until = -1  # torchrun's "Root Cause (first observed failure):" block
    for rec, found in _with_triggers(records):
        text = rec.text
        if _ROOT_CAUSE in found:
            root_cause_until = rec.line + 12
        if len(text) < 6:
            continue
        for ex in _extractors_of(found):
            m = ex.pattern.search(text)
            if m is None:
                continue
            if ex.name == "oom_gpu":
                out.append(
                    Fact(
                        name="gpu_memory_total",
                        value=m.group("gpu_memory_total"),
                        line=rec.line,
                        text=_short(text),
                        priority=1,
                    )
                )
                continue
            if m.groupdict().get("req"):
                continue  # a value the program requires, not the one it found
            priority = ex.priority
            if ex.name in _ROOT_CAUSE_FACTS and rec.line <= root_cause_until:
                priority += 2  # the first failure, not the others listed under "Failures:"
            out.append(
                Fact(
                    name=ex.name or "",
                    value=(m.group("v") or m["v2"] or m["v3"] or "").strip(),
                    line=rec.line,
                    text=_short(text),
                    priority=priority,
                )
            )
        for trigger, fn in _SPECIAL:
            if trigger in found:
                fn(rec, out)
        if "AttentionSelectorConfig(" in found:
            _selector(rec, out, payloads)
        if "Reasons: {" in found:
            _reasons(rec, out, payloads)
    return _derive(out), payloads


_ROOT_CAUSE = "Root Cause (first observed failure)"


def _by_trigger() -> dict[str, list[tuple[int, Extractor]]]:
    """Each trigger's extractors with their places in the table."""
    out: dict[str, list[tuple[int, Extractor]]] = {}
    for k, ex in enumerate(EXTRACTORS):
        for trigger in ex.triggers:
            out.setdefault(trigger, []).append((k, ex))
    return out


_BY_TRIGGER = _by_trigger()


def _extractors_of(found: set[str]) -> list[Extractor]:
    """The extractors whose trigger is among ``found``, in the table's order (a line holds a
    few triggers; testing all 61 on every such line was most of the extraction's own time)."""
    hits = [pair for t in found for pair in _BY_TRIGGER.get(t, ())]
    if len(hits) > 1:  # in table order, each once (a line may hold two of one's triggers)
        return [ex for _k, ex in sorted(dict(hits).items())]
    return [ex for _k, ex in hits]


TRIGGERS: tuple[str, ...] = tuple(
    sorted(
        {t for e in EXTRACTORS for t in e.triggers}
        | {t for t, _fn in _SPECIAL}
        | {"AttentionSelectorConfig(", "Reasons: {", _ROOT_CAUSE}
    )
)
"""Every literal :func:`extract` looks for: a line holding none of them has no fact."""


@cache
def _automaton() -> Any:
    import ahocorasick

    auto = ahocorasick.Automaton()
    for trigger in TRIGGERS:
        auto.add_word(trigger, trigger)
    auto.make_automaton()
    return auto


_MANY_FROM = 3
"""The text from which :func:`_with_triggers` scans with Hyperscan (where it is used) instead
of the automaton: a process that reads many logs (``ingest``, ``rules test``)."""
_texts = 0
"""Texts read so far in this process."""


def _with_triggers(records: Iterable[Record]) -> list[tuple[Record, set[str]]]:
    """The records holding a trigger, in order, each with the triggers it holds: one
    Aho-Corasick pass over the records' texts joined by newlines (no trigger holds one), where
    testing every trigger on every line took ~45 substring tests a line; from the
    :data:`_MANY_FROM`-th text of a process on, one Hyperscan pass over their UTF-8 bytes
    (:mod:`tracelens.literals`: several times faster)."""
    global _texts
    recs = records if isinstance(records, list) else list(records)
    texts = [rec.text for rec in recs]
    joined = "\n".join(texts)
    _texts += 1
    occurrences = _occurrences() if _texts >= _MANY_FROM else None
    found: dict[int, set[str]] = {}
    starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
    if occurrences is not None:
        data = joined.encode("utf-8", "surrogatepass")
        if len(data) != len(joined):  # not ASCII: the offsets are in bytes
            starts = list(
                accumulate((len(t.encode("utf-8", "surrogatepass")) + 1 for t in texts), initial=0)
            )
        for end, k in occurrences(data):
            line = bisect_right(starts, end - _WIDTH[k]) - 1
            found.setdefault(line, set()).add(TRIGGERS[k])
    else:
        for end, trigger in _automaton().iter(joined):
            k = bisect_right(starts, end - len(trigger) + 1) - 1
            found.setdefault(k, set()).add(trigger)
    return [(recs[k], found[k]) for k in sorted(found)]


_WIDTH = [len(t.encode("utf-8", "surrogatepass")) for t in TRIGGERS]
"""Each trigger's length in UTF-8 bytes."""


def expect_many() -> None:
    """This process will read many logs: Hyperscan's finder now, and from the first text on (a
    pool's parent calls this before it forks)."""
    global _texts
    _texts = max(_texts, _MANY_FROM)
    _occurrences()


@cache
def _occurrences() -> Any:
    """Hyperscan's finder of the triggers, or ``None`` where it is not used."""
    from tracelens.literals import occurrence_finder

    return occurrence_finder(TRIGGERS)


_LINUX_SIGNALS = {
    "1": "SIGHUP",
    "2": "SIGINT",
    "4": "SIGILL",
    "6": "SIGABRT",
    "7": "SIGBUS",
    "8": "SIGFPE",
    "9": "SIGKILL",
    "11": "SIGSEGV",
    "13": "SIGPIPE",
    "15": "SIGTERM",
}


def _derive(facts: list[Fact]) -> list[Fact]:
    """Normalize and infer: compute capability from sm_NN or the GPU name, model_path, the
    collectives ranks timed out in when they differ."""
    names = {f.name for f in facts}
    extra: list[Fact] = []
    for f in facts:
        if f.name == "sm" and f.value.isdigit() and len(f.value) >= 2:
            extra.append(
                Fact(
                    name="compute_capability",
                    value=f"{f.value[:-1]}.{f.value[-1]}",
                    line=f.line,
                    text=f.text,
                    priority=1,
                    derived=True,
                )
            )
        elif f.name == "compute_capability_int" and f.value.isdigit() and len(f.value) >= 2:
            extra.append(
                Fact(
                    name="compute_capability",
                    value=f"{f.value[:-1]}.{f.value[-1]}",
                    line=f.line,
                    text=f.text,
                    priority=1,
                    derived=True,
                )
            )
        elif (
            f.name == "exit_code"
            and f.value.startswith("-")
            and f.value[1:] in _LINUX_SIGNALS
            and "signal" not in names
        ):
            # a process launcher reports death by signal N as exit code -N
            sig = _LINUX_SIGNALS[f.value[1:]]
            extra.append(
                Fact(name="signal", value=sig, line=f.line, text=f.text, priority=0, derived=True)
            )
            names.add("signal")
        elif f.name == "signal_name":
            extra.append(
                Fact(
                    name="signal",
                    value="SIG" + f.value,
                    line=f.line,
                    text=f.text,
                    priority=1,
                    derived=True,
                )
            )
        elif f.name == "model" and compile_regex(_MODEL_PATH).match(f.value):
            extra.append(
                Fact(
                    name="model_path",
                    value=f.value.rstrip("/"),
                    line=f.line,
                    text=f.text,
                    priority=f.priority,
                    derived=True,
                )
            )
    if "compute_capability" not in names:
        for f in facts:
            if f.name != "gpu_name":
                continue
            for pat, cc in _GPU_CC:
                if compile_regex("(?i)" + pat).search(f.value):
                    extra.append(
                        Fact(
                            name="compute_capability",
                            value=cc,
                            line=f.line,
                            text=f.text,
                            priority=0,
                            derived=True,
                        )
                    )
                    break
            else:
                continue
            break
    idx = [f for f in facts if f.name == "gpu_name"]
    if idx and "gpu_count" not in names:
        count = len({f.line for f in idx})
        if count > 1:
            extra.append(
                Fact(
                    name="gpu_count",
                    value=str(count),
                    line=idx[0].line,
                    text=idx[0].text,
                    priority=0,
                    derived=True,
                )
            )
    if "collective_timeout" in names and (differ := collectives_differ(facts)) is not None:
        extra.append(differ)
    return facts + extra
