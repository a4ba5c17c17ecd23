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

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tracelens.keyvalues import kv_pairs as _kv_pairs
from tracelens.models import Fact, Record
from tracelens.regex import compile_regex

_Out = list[Fact]


@dataclass(frozen=True)
class Extractor:
    trigger: str
    """A literal that must be in the line (fast pre-check)."""
    source: str
    """The regex; compiled the first time its trigger occurs (most never do in one log)."""
    name: str | None = None
    """Fact name for group ``v``; ``None`` when every named group is a fact."""
    priority: int = 0
    scan: bool = True
    """Whether the large-log scanner looks for the trigger (False for literals so common that
    windows around them would be most of the log: package names in every frame path, NCCL INFO
    lines); such facts are read where other windows already are."""

    @property
    def pattern(self) -> Any:
        """The RE2 regex."""
        return compile_regex(self.source)


def _x(trigger: str, pattern: str, name: str | None = None, priority: int = 0, scan: bool = True) -> Extractor:
    return Extractor(trigger, pattern, name, priority, scan)


# a version; a dot counts only when more of the version follows it ("found vllm==0.8.1." ends a
# sentence)
_VER = r"(?P<v>\d+\.\d+(?:[\w+-]|\.[\w+-])*)"

EXTRACTORS: tuple[Extractor, ...] = (
    _x("LLM engine (v", r"Initializing an? (?:V1 )?LLM engine \(v" + _VER + r"\)", "vllm_version", 2),
    _x("vLLM API server version", r"vLLM API server version " + _VER, "vllm_version", 2),
    _x("vLLM Version", r"^vLLM Version\s*:\s*" + _VER, "vllm_version", 3),
    _x("vllm==", r"\bvllm==" + _VER, "vllm_version", 1),
    _x("sglang", r"\bsglang(?:==|:\s*|\s+version\s*)" + _VER, "sglang_version", 1, scan=False),
    # collect_env ("PyTorch version: 2.4.0") and the `accelerate env` / `transformers env`
    # lists ("- PyTorch version (GPU?): 2.4.0+cu124 (True)", "- `Accelerate` version: 0.34.0")
    _x("PyTorch version", r"^(?:- )?PyTorch version(?: \(GPU\?\))?\s*:\s*" + _VER, "torch_version", 3),
    _x(" version: ", r"^- `?Accelerate`? version\s*:\s*" + _VER, "accelerate_version", 3),
    _x(" version: ", r"^- `?[Tt]ransformers`? version\s*:\s*" + _VER, "transformers_version", 3),
    _x("torch==", r"\btorch==" + _VER, "torch_version", 1),
    _x("transformers", r"\btransformers(?:==|\s+version\s*[:=]?\s*)" + _VER, "transformers_version", 1, scan=False),
    _x("triton==", r"\btriton==" + _VER, "triton_version", 1),
    _x("flashinfer", r"\bflashinfer(?:-python)?==" + _VER, "flashinfer_version", 1, scan=False),
    _x("CUDA used to build PyTorch", r"CUDA used to build PyTorch\s*:\s*" + _VER, "cuda_version", 2),
    _x("CUDA Version", r"CUDA Version:\s*" + _VER, "cuda_driver_api_version", 1),
    _x("CUDA runtime version", r"CUDA runtime version\s*:\s*" + _VER, "cuda_version", 1),
    _x("Driver Version", r"Driver Version:\s*(?P<v>[\d.]+)", "driver_version", 2),
    _x("driver version", r"[Dd]river version\s*:\s*(?P<v>[\d.]+)", "driver_version", 2),
    _x("Python version", r"^(?:- )?Python version\s*:\s*(?P<v>\d+\.\d+(?:\.\d+)?)", "python_version", 2),
    _x("NCCL version", r"NCCL version\s*:?\s*(?P<v>\d+\.\d+\.\d+)", "nccl_version", 1),
    _x("Resolved architecture", r"Resolved architecture: (?P<v>\w+)", "architecture", 2),
    _x("architectures", r"[Aa]rchitectures?[\"']?\s*[:=]\s*\[[\"'](?P<v>\w+)[\"']", "architecture", 1),
    _x("Using max model len", r"Using max model len (?P<v>\d+)", "max_model_len", 3),
    _x(" backend", r"Using (?P<v>[A-Z][A-Z0-9_]+)(?: attention)? backend", "attention_backend", 2),
    _x(" backend", r"Using (?:AttentionBackendEnum|_Backend)\.(?P<v>\w+) backend", "attention_backend", 2),
    _x("GPU ", r"^GPU (?P<idx>\d+): (?P<v>NVIDIA [^\n(]+?|Tesla [^\n(]+?|AMD [^\n(]+?)\s*(?:\(UUID.*)?$", "gpu_name", 2, scan=False),
    _x("GPU models and configuration", r"GPU models and configuration\s*:\s*(?:GPU 0: )?(?P<v>(?:NVIDIA|Tesla|AMD) [^\n]+)", "gpu_name", 2),
    _x("NVIDIA", r"^\|\s+\d+\s+(?P<v>NVIDIA [\w -]+?)\s{2,}(?:On|Off)\s+\|", "gpu_name", 1, scan=False),
    _x("capability", r"compute capability (?:of |is |= |: )?(?P<v>\d+\.\d+)", "compute_capability", 2),
    _x("capability", r"cuda capability (?P<v>\d+\.\d+)", "compute_capability", 2),
    _x("Current capability", r"Current capability: (?P<v>\d+)", "compute_capability_int", 2),
    _x("sm_", r"CUDA capability sm_(?P<v>\d+)", "sm", 2, scan=False),
    _x("total capacity", r"GPU (?P<v>\d+) has a total capacity of (?P<gpu_memory_total>[\d.]+ [GM]iB)", "oom_gpu", 1),
    _x("exitcode", r"exitcode\s*:\s*(?P<v>-?\d+)", "exit_code", 2, scan=False),
    _x("Signal", r"Signal (?P<n>\d+) \((?P<v>SIG[A-Z]+)\) received by PID", "signal", 2, scan=False),
    _x("rank", r"^\s*rank\s*:\s*(?P<v>\d+) \(local_rank", "failed_rank", 2, scan=False),
    _x("host", r"^\s*host\s*:\s*(?P<v>\S+)\s*$", "host", 1, scan=False),
    _x("Killed process", r"Out of memory: Killed process (?P<v>\d+)", "oom_killed_pid", 2),
    _x("code=killed", r"code=killed, status=\d+/(?P<v>[A-Z]+)", "signal_name", 2),
    _x("Exit code:", r"^\s*Exit code:\s+(?P<v>-?\d+)\s*$", "exit_code", 1),
    _x("exits with return code", r"exits with return code = (?P<v>-?\d+)\s*$", "exit_code", 1),
    _x("Found GPU", r"Found GPU\d+ (?P<v>.+?) which is of cuda capability", "gpu_name", 1),
    _x("NCCL", r"NCCL version (?P<v>\d+\.\d+\.\d+)", "nccl_version", 1, scan=False),
)

_ROOT_CAUSE_FACTS = frozenset({"failed_rank", "exit_code", "signal", "host"})

# Engine-config keys worth keeping, and the fact names they map to.
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

# a quoted value, matched at one position (its alternatives never overlap: linear)
_SELECTOR = compile_regex(r"AttentionSelectorConfig\((?P<body>[^()]*)\)")
_REASONS = compile_regex(r"Reasons: \{(?P<body>.*)\}")
_REASON_ITEM = compile_regex(r"(?P<b>[A-Z][A-Z0-9_]+): \[(?P<r>[^\]]*)\]")
_CLI = compile_regex(r"(?:^|\s|\$ )(?:vllm serve|python3? -m (?:vllm\.entrypoints\.openai\.api_server|sglang\.launch_server))\b(?P<args>.*)")
_DICT_ITEM = compile_regex(r"'(\w+)': ('(?:[^'\\]|\\.)*'|[^,{}]+)")

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

_MODEL_PATH = compile_regex(r"^(?:/|~|\./|\.\./)")


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
            out.append(Fact(name=name, value=_unquote(val), line=rec.line, text=_short(text), priority=4))


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
    return [
        (k, _unquote(v))
        for k, v in _DICT_ITEM.findall(body)
    ]


def _selector(rec: Record, out: _Out, payloads: dict) -> None:
    m = _SELECTOR.search(rec.text)
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
            out.append(Fact(name=name, value=conf[key], line=rec.line, text=_short(rec.text), priority=5))


def _reasons(rec: Record, out: _Out, payloads: dict) -> None:
    m = _REASONS.search(rec.text)
    if m is None:
        return
    reasons = {
        item.group("b"): [r.strip() for r in item.group("r").split(",") if r.strip()]
        for item in _REASON_ITEM.finditer(m.group("body"))
    }
    if not reasons:
        return
    payloads.setdefault("backend_reasons", reasons)
    out.append(
        Fact(name="rejected_backends", value=",".join(reasons), line=rec.line, text=_short(rec.text), priority=2)
    )
    for backend, why in reasons.items():
        out.append(
            Fact(name=f"rejected.{backend}", value="; ".join(why), line=rec.line, text=_short(rec.text), priority=2)
        )


def _cli(rec: Record, out: _Out) -> None:
    m = _CLI.search(rec.text)
    if m is None:
        return
    toks = m.group("args").split()
    if toks and not toks[0].startswith(("-", "$")) and "serve" in rec.text:
        out.append(Fact(name="model", value=toks[0], line=rec.line, text=_short(rec.text), priority=3))
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


_SPECIAL: tuple[tuple[str, Callable[..., None]], ...] = (
    ("ServerArgs(", _sglang_args),
    ("with config:", _engine_config),
    ("args: ", _args_dict),
    ("serve", _cli),
    ("launch_server", _cli),
    ("api_server", _cli),
)


# Literal-bytes regexes of the lines that carry facts, for the large-log scanner
# (tracelens.read.scan): every specific extractor trigger, and the openings of the structured
# payloads and tables the special parsers read.
SCAN_PATTERNS: tuple[bytes, ...] = (
    *sorted({re.escape(e.trigger).encode() for e in EXTRACTORS if e.scan}),
    rb"ServerArgs\(", rb"server_args", rb"with config:", rb"non-default args", rb"args: Namespace",
    rb"launch_server", rb"vllm serve", rb"NVIDIA-SMI", rb"Nvidia driver version", rb"Collecting environment",
    rb"Root Cause", rb"\[pip3\]", rb"GPU \d+:",
)


def extract(records: Iterable[Record]) -> tuple[list[Fact], dict[str, dict]]:
    """All facts in the records, and the structured payloads found in messages."""
    out: _Out = []
    payloads: dict[str, dict] = {}
    root_cause_until = -1  # torchrun's "Root Cause (first observed failure):" block
    for rec in records:
        text = rec.text
        if "Root Cause (first observed failure)" in text:
            root_cause_until = rec.line + 12
        if len(text) < 6:
            continue
        for ex in EXTRACTORS:
            if ex.trigger not in text:
                continue
            m = ex.pattern.search(text)
            if m is None:
                continue
            if ex.name == "oom_gpu":
                out.append(Fact(name="gpu_memory_total", value=m.group("gpu_memory_total"), line=rec.line, text=_short(text), priority=1))
                continue
            priority = ex.priority
            if ex.name in _ROOT_CAUSE_FACTS and rec.line <= root_cause_until:
                priority += 2  # the first failure, not the others listed under "Failures:"
            out.append(Fact(name=ex.name or "", value=m.group("v").strip(), line=rec.line, text=_short(text), priority=priority))
        for trigger, fn in _SPECIAL:
            if trigger in text:
                fn(rec, out)
        if "AttentionSelectorConfig(" in text:
            _selector(rec, out, payloads)
        if "Reasons: {" in text:
            _reasons(rec, out, payloads)
    return _derive(out), payloads


_LINUX_SIGNALS = {
    "1": "SIGHUP", "2": "SIGINT", "4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE",
    "9": "SIGKILL", "11": "SIGSEGV", "13": "SIGPIPE", "15": "SIGTERM",
}


def _derive(facts: list[Fact]) -> list[Fact]:
    """Normalize and infer: compute capability from sm_NN or the GPU name, model_path."""
    names = {f.name for f in facts}
    extra: list[Fact] = []
    for f in facts:
        if f.name == "sm" and f.value.isdigit() and len(f.value) >= 2:
            extra.append(Fact(name="compute_capability", value=f"{f.value[:-1]}.{f.value[-1]}", line=f.line, text=f.text, priority=1, derived=True))
        elif f.name == "compute_capability_int" and f.value.isdigit() and len(f.value) >= 2:
            extra.append(Fact(name="compute_capability", value=f"{f.value[:-1]}.{f.value[-1]}", line=f.line, text=f.text, priority=1, derived=True))
        elif f.name == "exit_code" and f.value.startswith("-") and f.value[1:] in _LINUX_SIGNALS and "signal" not in names:
            # a process launcher reports death by signal N as exit code -N
            sig = _LINUX_SIGNALS[f.value[1:]]
            extra.append(Fact(name="signal", value=sig, line=f.line, text=f.text, priority=0, derived=True))
            names.add("signal")
        elif f.name == "signal_name":
            extra.append(Fact(name="signal", value="SIG" + f.value, line=f.line, text=f.text, priority=1, derived=True))
        elif f.name == "model" and _MODEL_PATH.match(f.value):
            extra.append(Fact(name="model_path", value=f.value.rstrip("/"), line=f.line, text=f.text, priority=f.priority, derived=True))
    if "compute_capability" not in names:
        for f in facts:
            if f.name != "gpu_name":
                continue
            for pat, cc in _GPU_CC:
                if compile_regex("(?i)" + pat).search(f.value):
                    extra.append(Fact(name="compute_capability", value=cc, line=f.line, text=f.text, priority=0, derived=True))
                    break
            else:
                continue
            break
    idx = [f for f in facts if f.name == "gpu_name"]
    if idx and "gpu_count" not in names:
        count = len({f.line for f in idx})
        if count > 1:
            extra.append(Fact(name="gpu_count", value=str(count), line=idx[0].line, text=idx[0].text, priority=0, derived=True))
    return facts + extra
