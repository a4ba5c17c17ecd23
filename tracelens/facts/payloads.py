"""The structured payloads facts are read from: vLLM's engine config line and ``non-default
args``, argparse's ``Namespace(...)``, SGLang's ``ServerArgs(...)``, the ``vllm serve`` /
``launch_server`` command line, the attention selector's config and reasons."""

from __future__ import annotations

import ast

from tracelens.keyvalues import kv_pairs as _kv_pairs
from tracelens.models import Fact, Record
from tracelens.regex import compile_regex

_Out = list[Fact]


_CONFIG_KEYS = {
    "model": "model",
    "tokenizer": "tokenizer",
    "dtype": "dtype",
    "max_seq_len": "max_model_len",
    "max_model_len": "max_model_len",
    "tensor_parallel_size": "tensor_parallel_size",
    "pipeline_parallel_size": "pipeline_parallel_size",
    "data_parallel_size": "data_parallel_size",
    "quantization": "quantization",
    "kv_cache_dtype": "kv_cache_dtype",
    "trust_remote_code": "trust_remote_code",
    "enforce_eager": "enforce_eager",
    "served_model_name": "served_model_name",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "block_size": "block_size",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "enable_expert_parallel": "enable_expert_parallel",
}
# Keys of "non-default args" / argparse Namespace that describe what the user asked for.
_ARG_KEYS = dict(_CONFIG_KEYS, kv_cache_dtype="kv_cache_dtype_arg", model_tag="model")
_CLI_FLAGS = {
    "--kv-cache-dtype": "kv_cache_dtype_arg",
    "--tensor-parallel-size": "tensor_parallel_size",
    "-tp": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "-pp": "pipeline_parallel_size",
    "--data-parallel-size": "data_parallel_size",
    "--max-model-len": "max_model_len",
    "--quantization": "quantization",
    "--dtype": "dtype",
    "--model": "model",
    "--model-path": "model",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--tp": "tensor_parallel_size",
    "--tp-size": "tensor_parallel_size",
    "--mem-fraction-static": "mem_fraction_static",
}

# The regexes of the payload parsers, compiled (compile_regex, once) when a log first has the
# line one parses. A quoted value, matched at one position (its alternatives never overlap:
# linear).
_SELECTOR = r"AttentionSelectorConfig\((?P<body>[^()]*)\)"
_REASONS = r"Reasons: \{(?P<body>.*)\}"
_REASON_ITEM = r"(?P<b>[A-Z][A-Z0-9_]+): \[(?P<r>[^\]]*)\]"
_CLI = r"(?:^|\s|\$ )(?:vllm serve|python3? -m (?:vllm\.entrypoints\.openai\.api_server|sglang\.launch_server))\b(?P<args>.*)"
_DICT_ITEM = r"'(\w+)': ('(?:[^'\\]|\\.)*'|[^,{}]+)"

# GPU name -> compute capability, for when the log names the GPU but not its capability.
_GPU_CC = (
    (r"RTX PRO [456]000 Blackwell|RTX 50[6-9]0|GB10\b|DGX Spark", "12.0"),
    (r"\bB300|GB300", "10.3"),
    (r"\bB200|\bB100|GB200", "10.0"),
    (r"\bH100|\bH200|\bH800|\bH20\b|GH200", "9.0"),
    (r"\bL40S?\b|\bL4\b|RTX 40[6-9]0|RTX 6000 Ada|RTX [2-5]000 Ada", "8.9"),
    (r"\bA100|\bA800|\bA30\b", "8.0"),
    (r"\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|RTX 30[5-9]0|RTX A[2-6]000", "8.6"),
    (r"\bT4\b|RTX 20[6-8]0|Quadro RTX", "7.5"),
    (r"\bV100", "7.0"),
    (r"\bP100", "6.0"),
)

_MODEL_PATH = r"^(?:/|~|\./|\.\./)"


def _short(text: str) -> str:
    return text if len(text) <= 300 else text[:297] + "..."


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _engine_config(rec: Record, out: _Out) -> None:
    text = rec.text
    i = text.find("with config:")
    if i < 0:
        return
    for key, val in _kv_pairs(text[i + 12 :]):
        name = _CONFIG_KEYS.get(key)
        if name and val not in ("None", ""):
            out.append(
                Fact(name=name, value=_unquote(val), line=rec.line, text=_short(text), priority=4)
            )


def _args_dict(rec: Record, out: _Out) -> None:
    text = rec.text
    i = text.find("non-default args: {")
    if i >= 0:
        body = text[i + len("non-default args: ") :]
        pairs = _dict_pairs(body)
    else:
        i = text.find("args: Namespace(")
        if i < 0:
            return
        pairs = [(k, _unquote(v)) for k, v in _kv_pairs(text[i + 16 :])]
    for key, val in pairs:
        name = _ARG_KEYS.get(key)
        if name and val not in ("None", ""):
            out.append(Fact(name=name, value=val, line=rec.line, text=_short(text), priority=3))


def _dict_pairs(body: str) -> list[tuple[str, str]]:
    try:
        value = ast.literal_eval(body.strip())
        if isinstance(value, dict):
            return [(str(k), str(v)) for k, v in value.items()]
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    return [(k, _unquote(v)) for k, v in compile_regex(_DICT_ITEM).findall(body)]


def _selector(rec: Record, out: _Out, payloads: dict) -> None:
    m = compile_regex(_SELECTOR).search(rec.text)
    if m is None:
        return
    conf = {k: _unquote(v) for k, v in _kv_pairs(m.group("body") + ")")}
    payloads.setdefault("attention_selector", conf)
    for key, name in (
        ("kv_cache_dtype", "kv_cache_dtype"),
        ("head_size", "head_size"),
        ("use_mla", "use_mla"),
        ("use_sparse", "use_sparse"),
        ("dtype", "dtype"),
        ("block_size", "block_size"),
    ):
        if key in conf and conf[key] not in ("None", ""):
            out.append(
                Fact(name=name, value=conf[key], line=rec.line, text=_short(rec.text), priority=5)
            )


def _reasons(rec: Record, out: _Out, payloads: dict) -> None:
    m = compile_regex(_REASONS).search(rec.text)
    if m is None:
        return
    reasons = {
        item.group("b"): [r.strip() for r in item.group("r").split(",") if r.strip()]
        for item in compile_regex(_REASON_ITEM).finditer(m.group("body"))
    }
    if not reasons:
        return
    payloads.setdefault("backend_reasons", reasons)
    out.append(
        Fact(
            name="rejected_backends",
            value=",".join(reasons),
            line=rec.line,
            text=_short(rec.text),
            priority=2,
        )
    )
    for backend, why in reasons.items():
        out.append(
            Fact(
                name=f"rejected.{backend}",
                value="; ".join(why),
                line=rec.line,
                text=_short(rec.text),
                priority=2,
            )
        )


def _cli(rec: Record, out: _Out) -> None:
    m = compile_regex(_CLI).search(rec.text)
    if m is None:
        return
    toks = m.group("args").split()
    if toks and not toks[0].startswith(("-", "$")) and "serve" in rec.text:
        out.append(
            Fact(name="model", value=toks[0], line=rec.line, text=_short(rec.text), priority=3)
        )
    for k, tok in enumerate(toks):
        flag, _, inline = tok.partition("=")
        name = _CLI_FLAGS.get(flag)
        if name is None:
            continue
        val = inline or (toks[k + 1] if k + 1 < len(toks) else "")
        # "$MODEL_PATH": the script's variable, echoed unexpanded (a shell's "Killed" line)
        if val and not val.startswith("--") and "$" not in val:
            out.append(Fact(name=name, value=val, line=rec.line, text=_short(rec.text), priority=3))


_SGLANG_KEYS = {
    "model_path": "model",
    "tokenizer_path": "tokenizer",
    "tp_size": "tensor_parallel_size",
    "pp_size": "pipeline_parallel_size",
    "dp_size": "data_parallel_size",
    "ep_size": "expert_parallel_size",
    "mem_fraction_static": "mem_fraction_static",
    "context_length": "max_model_len",
    "kv_cache_dtype": "kv_cache_dtype_arg",
    "quantization": "quantization",
    "dtype": "dtype",
    "trust_remote_code": "trust_remote_code",
    "port": "port",
    "attention_backend": "attention_backend_arg",
    "chunked_prefill_size": "chunked_prefill_size",
    "cuda_graph_max_bs": "cuda_graph_max_bs",
}


def _sglang_args(rec: Record, out: _Out) -> None:
    """SGLang's ``server_args=ServerArgs(model_path='…', tp_size=4, …)`` line."""
    text = rec.text
    i = text.find("ServerArgs(")
    if i < 0:
        return
    for key, val in _kv_pairs(text[i + len("ServerArgs(") :]):
        name = _SGLANG_KEYS.get(key)
        val = _unquote(val)
        if name and val not in ("None", ""):
            out.append(Fact(name=name, value=val, line=rec.line, text=_short(text), priority=3))


_CAPABILITY_PAIR = r"(?i)(?:\b(?:compute |cuda |device )?|_)capability(?:\(\))?\s*[:=]?\s*\((?P<major>\d{1,2}), ?(?P<minor>\d)\)"


def _capability_pair(rec: Record, out: _Out) -> None:
    """``torch.cuda.get_device_capability()`` as a script prints it: "capability (6, 0)",
    "compute capability: (8, 6)" -> compute_capability 6.0 / 8.6."""
    m = compile_regex(_CAPABILITY_PAIR).search(rec.text)
    if m is not None:
        out.append(
            Fact(
                name="compute_capability",
                value=f"{m['major']}.{m['minor']}",
                line=rec.line,
                text=_short(rec.text),
                priority=1,
            )
        )


# ProcessGroupNCCL's watchdog (ProcessGroupNCCL.cpp): "[PG ID 0 PG GUID 0(default_pg) Rank 3]
# Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1121, OpType=ALLREDUCE,
# NumelIn=544997376, NumelOut=544997376, Timeout(ms)=600000) ran for ..." (torch 2.x; 1.x
# prints "[Rank 3] ..." and no element counts)
WATCHDOG = "Watchdog caught collective operation timeout"
_WORK = (
    r"(?:\[PG ID (?P<pg>\d+)[^\]]*\] )?"
    + WATCHDOG
    + r": WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)(?:, NumelIn=(?P<numel>\d+))?"
)


def _watchdog(rec: Record, out: _Out) -> None:
    """A collective a rank's watchdog timed out in: ``collective_timeout`` ("SeqNum=1121
    ALLREDUCE NumelIn=544997376", after "PG 0 " when the line names its process group)."""
    m = compile_regex(_WORK).search(rec.text)
    if m is None:
        return
    pg = f"PG {m['pg']} " if m["pg"] else ""
    numel = f" NumelIn={m['numel']}" if m["numel"] else ""
    value = f"{pg}SeqNum={m['seq']} {m['op']}{numel}"
    out.append(Fact(name="collective_timeout", value=value, line=rec.line, text=_short(rec.text)))


_SAME_SIZE = frozenset(
    {"ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "REDUCE_SCATTER"}
    | {"_REDUCE_SCATTER_BASE", "BARRIER"}
)
"""Collectives whose every rank passes as many elements (an all-to-all's split sizes, a gather's
root may differ)."""
_EVERY_RANK = _SAME_SIZE - {"BROADCAST", "REDUCE"} | {"ALLTOALL", "ALLTOALL_BASE"}
"""Collectives a rank completes only with every other rank's part: a rank stuck in collective
N holds every other rank at N + 1 at most (a broadcast's or a reduce's root may run ahead)."""


def collectives_differ(facts: list[Fact]) -> Fact | None:
    """``collectives_differ``: the collectives the ranks of one process group timed out in
    ("SeqNum=1116 ALLREDUCE NumelIn=675840 / SeqNum=1121 ALLREDUCE NumelIn=544997376") when they
    cannot all be one call: one sequence number with another operation or element count, or
    collectives that wait for every rank two or more numbers apart. The ranks then issued
    different collectives (a rank that skipped or added one), which no single line shows. Lines
    that name no process group are compared among themselves."""
    groups: dict[str, dict[str, Fact]] = {}
    for f in facts:
        if f.name == "collective_timeout":
            pg, _, work = f.value.partition("SeqNum=")
            groups.setdefault(pg, {}).setdefault("SeqNum=" + work, f)
    for works in groups.values():
        calls = [(int(w.split()[0][7:]), w.split()[1], w) for w in works]
        if any(_apart(a, b) for a in calls for b in calls if a < b):
            first = min(works.values(), key=lambda f: f.line)
            return Fact(
                name="collectives_differ",
                value=" / ".join(w for _s, _o, w in sorted(calls)),
                line=first.line,
                text=first.text,
                priority=1,
                derived=True,
            )
    return None


def _apart(a: tuple[int, str, str], b: tuple[int, str, str]) -> bool:
    """Whether two timed-out collectives of one group cannot be the same call of every rank."""
    (seq_a, op_a, work_a), (seq_b, op_b, work_b) = a, b
    if seq_a == seq_b:
        return op_a != op_b or (op_a in _SAME_SIZE and work_a != work_b)
    return abs(seq_a - seq_b) >= 2 and op_a in _EVERY_RANK and op_b in _EVERY_RANK


# vLLM's CUDA graph mode (CUDAGraphMode in vllm/config/compilation.py: NONE = 0, PIECEWISE = 1,
# FULL = 2, FULL_DECODE_ONLY = (FULL, NONE), FULL_AND_PIECEWISE = (FULL, PIECEWISE)) as the
# engine config prints it (repr "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>", JSON "[2,1]" or
# 1) and as it was asked for ('cudagraph_mode': 'PIECEWISE', -O.cudagraph_mode=piecewise)
CUDAGRAPH = "cudagraph_mode"
_CUDAGRAPH = (
    r"""cudagraph_mode['"]?\s*[:=]\s*(?:<CUDAGraphMode\.(?P<name>[A-Z_]+):|['"]?(?P<given>"""
    r"""(?i:full_and_piecewise|full_decode_only|piecewise|full|none))\b|(?P<value>\[\d, ?\d\]|\d\b))"""
)
_CUDAGRAPH_VALUES = {
    "0": "NONE",
    "1": "PIECEWISE",
    "2": "FULL",
    "[2,0]": "FULL_DECODE_ONLY",
    "[2,1]": "FULL_AND_PIECEWISE",
}


def _cudagraph(rec: Record, out: _Out) -> None:
    """``cudagraph_mode``: the mode's name (NONE, PIECEWISE, FULL, FULL_DECODE_ONLY,
    FULL_AND_PIECEWISE) however the line writes it."""
    m = compile_regex(_CUDAGRAPH).search(rec.text)
    if m is None:
        return
    if m["name"]:
        mode = m["name"]
    elif m["given"]:
        mode = m["given"].upper()
    else:
        mode = _CUDAGRAPH_VALUES.get(m["value"].replace(" ", ""), "")
    if mode:
        out.append(Fact(name="cudagraph_mode", value=mode, line=rec.line, text=_short(rec.text)))
