"""What a failure no rule knows most likely is: a taxonomy category guessed from its kind, its
exception type, the words of its message and the file that raised it, for when no known failure
is near enough to lend its own (``tracelens.rulebook.unrecognized``) and for a scaffolded rule
(``tracelens rules new --from LOG``)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from tracelens.parse.frames import installed
from tracelens.parse.lexer import EXCEPTION_LINE
from tracelens.pyregex import compile_re
from tracelens.rulebook.origin import Origin
from tracelens.rulebook.sayings import say_it

# What an unrecognized failure most likely is, by its kind or exception type, when no known
# failure is near enough.
_BY_KIND = {
    "killed": "host-oom",
    "oom": "gpu-oom",
    "nccl": "nccl-error",
    "cuda": "gpu-kernel-fault",
    "container": "cuda-driver-mismatch",
    "usage": "config-invalid",
    "validation": "config-invalid",
    "server": "port-in-use",
    "compiler": "compile-failure",
    "linker": "compile-failure",
    "build": "compile-failure",
    "container-hook": "cuda-driver-mismatch",
    "pip": "dependency-missing",
    "timeout": "nccl-error",
    "evicted": "host-oom",  # a node out of memory (out of disk is said by the words first)
    "threads": "host-oom",  # no thread could start: the host's process or memory limits
    "openmp": "native-abi-mismatch",  # most often two OpenMP runtimes loaded into one process
}


@cache
def _by_type() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Exception types and the category they say, compiled on first use (only for a failure
    no rule knows)."""
    return (
        (compile_re(r"OutOfMemory|out of memory", re.I), "gpu-oom"),
        (compile_re(r"(?:ModuleNotFound|Import)Error$"), "dependency-missing"),
        (compile_re(r"(?:^|\.)MemoryError$"), "host-oom"),
        (
            compile_re(
                r"(?:FileNotFound|IsADirectory|NotADirectory)Error$|RepositoryNotFound|GatedRepo|EntryNotFound|"
                r"DatasetNotFound|HFValidationError$|^huggingface_hub\.errors\.(?!\w*Validation)"
            ),
            "model-access",
        ),
        (compile_re(r"NCCL|DistBackendError|DistNetworkError|DistStoreError"), "nccl-error"),
        (compile_re(r"^ray\.exceptions\.(?!RayTaskError)|^RayActorError$"), "ray-cluster"),
        (
            compile_re(
                r"(?:Triton|Inductor|BackendCompilerFailed|Unsupported$|TorchRuntimeError)|"
                r"_dynamo\.exc\."  # torch.export's UserError too
            ),
            "compile-failure",
        ),
        (compile_re(r"Harmony\w*Error$|^mistral_common\.|^jinja2\."), "tokenizer-error"),
        (compile_re(r"ValidationError$|ArgumentError$"), "config-invalid"),
        (compile_re(r"AcceleratorError|CUDA|cuda"), "gpu-kernel-fault"),
    )


@cache
def _tensor() -> re.Pattern[str]:
    """Words of a shape or dtype mismatch (compiled on first use)."""
    return compile_re(
        r"\b(?:shapes?|dtype|mat1 and mat2|Expected all tensors|scalar type|target tensor|"
        r"index out of range in self|on the compute device|size mismatch|sizes? of tensors?|"
        r"size of tensor|non-singleton dimension|Placeholder storage has not been allocated)\b",
        re.I,
    )


@cache
def _by_words() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Words of the message (and the raising module) that say which kind of failure it is,
    compiled on first use."""
    return (
        (
            compile_re(
                r"Cannot allocate memory|\[Errno 12\]|\bENOMEM\b|std::bad_alloc|MemoryError|"
                r"\boom[-_]kill",
                re.I,
            ),
            "host-oom",
        ),
        (
            compile_re(
                r"out of memory|OutOfMemory|CUBLAS_STATUS_ALLOC_FAILED|OUT_OF_DEVICE_MEMORY|"
                r"UR_RESULT_ERROR_OUT_OF_RESOURCES",
                re.I,
            ),
            "gpu-oom",
        ),
        # DTensor given a plain tensor, or an operator it has no sharding rule for
        (
            compile_re(r"got mixed torch\.Tensor and DTensor|does not have a sharding strategy"),
            "tensor-mismatch",
        ),
        (
            compile_re(
                r"\bNCCL\b|\bnccl\w*|ProcessGroup|c10d|all_?reduce|rendezvous|"
                r"Dist(?:Backend|Network|Store)Error",  # c++'s "terminate called ... 'c10::DistBackendError'"
                re.I,
            ),
            "nccl-error",
        ),
        (
            compile_re(
                r"No module named|cannot import name|is not installed|requires the \w+ library",
                re.I,
            ),
            "dependency-missing",
        ),
        (
            compile_re(
                r"doesn't exist on the Hub|Repository Not Found|is not a valid model identifier|"
                r"40[13] Client Error|for url: https?://huggingface\.co/|"
                r"No supported config format found|no such modeling files|"
                r"\bfiles? (?:\w+ ){0,3}(?:cannot|could not) be found\b",
                re.I,
            ),
            "model-access",
        ),
        (
            compile_re(
                r"\bGCS\b|\braylet\b|placement group|available GPUs in the cluster|"
                r"Total available GPUs \d+ is less than|\bray client\b|should have a unique IP address|"
                # a failed RAY_CHECK as Ray's C++ logger prints it (level "C")
                r"An unexpected system state has occurred|discovered a bug in Ray",
                re.I,
            ),
            "ray-cluster",
        ),
        (
            compile_re(
                r"\btokeniz|chat[_ ]template|jinja|special tokens?|detokeniz|untagged enum ModelWrapper|"
                r"\bharmony\b|mistral_common",
                re.I,
            ),
            "tokenizer-error",
        ),
        (
            compile_re(
                r"\bquantiz|\bawq\b|\bgptq\b|\bfp8\b|\bnvfp4\b|\bmxfp4\b|marlin|compressed[- ]tensors|compressed models?|"
                r"BitsAndBytes (?:models?|quantization)|\bbnb\b|\b(?:in )?[48]-?bit mode\b",
                re.I,
            ),
            "quantization-unsupported",
        ),
        (
            compile_re(
                r"attention backend|flash[_-]?attn|FlashAttention|xformers|flashinfer", re.I
            ),
            "attention-backend-unsupported",
        ),
        (
            compile_re(
                r"KV cache|kv_cache|token_to_kv_pool|cache blocks|num_gpu_blocks|increase --mem-fraction-static",
                re.I,
            ),
            "kv-cache-insufficient",
        ),
        (
            compile_re(
                r"torch\._dynamo|torch\._inductor|\binductor\b|\bdynamo\b|\btriton\b|CUDA graph|cudagraph|"
                r"compiled autograd",
                re.I,
            ),
            "compile-failure",
        ),
        (
            compile_re(
                r"CUDA error|cuda(?:Error|Malloc|Memcpy)|device-side assert|illegal memory|"
                r"misaligned address|CUBLAS_STATUS|CUDNN_STATUS|unspecified launch failure",
                re.I,
            ),
            "gpu-kernel-fault",
        ),
        (
            compile_re(
                r"safetensors|state_dict|checkpoint|No space left on device|corrupt|HeaderTooLarge|"
                r"deserializing header|central directory|PytorchStreamReader",
                re.I,
            ),
            "disk-or-file-corrupt",
        ),
        (
            compile_re(
                r"not supported|unsupported|must be|should be|invalid|expect(?:ed|ing) .* got|not divisible|exceeds?",
                re.I,
            ),
            "config-invalid",
        ),
    )


@cache
def _where() -> re.Pattern[str]:
    """A C++ error's place before its message (Transformer Engine's ``path.cu:1056 in function
    f: cuDNN Error: ...``): a long path would push the words out of the part looked at."""
    return compile_re(r"^\S+\.(?:cu|cuh|cpp|cc|h|hpp):\d+ in (?:function )?\S+: ")


def _quoted(origin: Origin) -> Origin | None:
    """The last exception of the traceback an exception's message quotes (Ray's
    "ActorDiedError: The actor died because of an error raised in its creation task, ..."
    followed by the actor's frames and its ``ValueError: ...``), with the lines after it as its
    message; None when the message quotes no frames."""
    lines = origin.message.splitlines()
    if not origin.type or not any(ln.lstrip().startswith('File "') for ln in lines):
        return None
    for k in range(len(lines) - 1, -1, -1):
        m = EXCEPTION_LINE.match(lines[k].strip())
        if m is not None:
            rest = "\n".join([m.group("msg"), *lines[k + 1 :]])
            return replace(origin, type=m.group("type"), message=rest, frame=None)
    return None


def guess_category(origin: Origin, framework_checks: bool = True) -> str:
    """The category the failure's kind, type, words and raising file say, or "unrecognized".
    Without ``framework_checks``, a failure raised by a framework's own checks with no other
    word stays "unrecognized" rather than config-invalid (for the words of known failures to
    answer first). An exception that quotes another's traceback (a Ray actor's, a worker
    process's) is what that one says, when it says anything."""
    if origin.hang is not None:
        return origin.hang.category  # where it waited says what it waited for
    inner = _quoted(origin)
    if inner is not None and (got := guess_category(inner, framework_checks)) != "unrecognized":
        return got
    head = origin.message if origin.type else origin.text
    head = _where().sub("", head[:600], count=1)[:300]
    if origin.kind == "crash":  # a shell's report of the signal: the command after it is no word
        head = _shell_job().sub(r"\1", head, count=1)
    if origin.kind == "evicted" and "probe" in head:
        return "config-invalid"  # a probe that gave up on a container still starting
    for rx, cat in say_it():
        if rx.search(head):
            return cat
    if origin.kind in _BY_KIND:
        return _BY_KIND[origin.kind]
    # the raising file, with "/" whatever the system (every path test below reads it so)
    file = origin.frame.file.replace("\\", "/") if origin.frame is not None else ""
    if "unexpected keyword argument" in head and _INSTANTIATOR.search(file):
        return "config-invalid"  # a config file named a key the class does not take
    if (
        _missing().search(head)
        or (
            origin.type.endswith("FileNotFoundError")
            and origin.frame is not None
            and origin.frame.file.endswith("subprocess.py")
        )
        or (_signature().search(head) and installed(file))
    ):
        # a program that is not installed (when it is subprocess), or one installed package
        # calling another with the arguments of another version of it
        return "dependency-missing"
    if origin.importing and origin.type:
        # raised by an installed package's own code while it was imported: what it found at
        # import (another version of a package it patches or builds on), not what it was given
        return "dependency-missing"
    if origin.type.endswith(_FILE_ERRORS) and _COMPILER_CACHE.search(file):
        return "compile-failure"  # a kernel compiler's cache lost a file (two writers racing)
    validation = origin.type.endswith("ValidationError")
    for rx, cat in _by_type():
        if validation and cat == "config-invalid":
            break  # a pydantic error wraps a message: its words say more than its type
        if rx.search(origin.type) or (cat == "gpu-oom" and rx.search(origin.message[:300])):
            return cat
    for rx, cat in _by_path():
        if rx.search(file):
            return cat
    if _tensor().search(head) and origin.type in _TENSOR_TYPES and not _ENGINE.search(file):
        return "tensor-mismatch"  # in the user's code: in a serving engine's, its inputs
    if _EXPORT.search(file):
        return "compile-failure"  # torch.export's own checks (a shape an input breaks: above)
    if origin.type in _CHECK_TYPES and _DIST_SETUP.search(file) and not _COMM_WORDS.search(head):
        return "config-invalid"  # torch.distributed's checks of how it was set up
    module = origin.frame.module if origin.frame is not None and origin.frame.module else ""
    for rx, cat in _by_words():
        if rx.search(head) or (
            cat in ("compile-failure", "nccl-error", "tokenizer-error") and rx.search(module)
        ):
            return cat
    if validation:
        return "config-invalid"
    if origin.type.rsplit(".", 1)[-1] == "TimeoutError" and _ENGINE.search(file):
        # a serving engine that waited for its workers (V0's run_engine_loop, an RPC to the
        # engine core): one of them stalled or died, whatever the engine was given
        return "worker-died"
    if framework_checks and origin.kind == "exception" and _FRAMEWORK.search(file):
        # raised by a serving or training framework's own checks, with no word of anything
        # else: what they reject is nearly always the configuration they were given
        return "config-invalid"
    return "unrecognized"


@cache
def _signature() -> re.Pattern[str]:
    """A call whose arguments do not fit the function's signature (compiled on first use)."""
    return compile_re(
        r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given|"
        r"got multiple values for (?:keyword )?argument|"
        r"missing \d+ required (?:positional|keyword-only) arguments?"
    )


@cache
def _shell_job() -> re.Pattern[str]:
    """A shell's report of a job a signal ended, up to the command it quotes ("... 4821 Aborted
    (core dumped) python launch.py --xformers", "zsh: abort      python run.py")."""
    return compile_re(
        r"(\(core dumped\)|\b(?:abort|segmentation fault|bus error|illegal hardware instruction))"
        r"\s+\S.*$"
    )


_FILE_ERRORS = ("FileNotFoundError", "FileExistsError")
_COMPILER_CACHE = compile_re(r"/triton/runtime/cache\.py$|/torch/_inductor/")
"""Where a kernel compiler keeps its cache: a file missing there is the compile's failure."""
_CHECK_TYPES = frozenset({"ValueError", "AssertionError", "TypeError"})
_DIST_SETUP = compile_re(r"/torch/distributed/(?:distributed_c10d|rendezvous|device_mesh)\.py$")
_COMM_WORDS = compile_re(
    r"NCCL|timed? ?out|Timeout|connect|host not found|Name or service not known|resolve|"
    r"unreachable|refused",
    re.I,
)
"""A check in torch.distributed's setup (a backend, a rank, a group size or a mesh it was given)
that names no communication failure: how the job set it up, not the network."""
_EXPORT = compile_re(r"/torch/_?export/")
_TENSOR_TYPES = frozenset(
    {"RuntimeError", "ValueError", "AssertionError", "IndexError", "TypeError"}
)
_INSTANTIATOR = compile_re(
    r"/torchtune/config/_instantiate\.py$|/hydra/_internal/instantiate/|/omegaconf/"
)
"""Code that builds objects from a config file: a keyword it passes comes from the config."""
_ENGINE = compile_re(r"/(?:vllm|sglang)/")
"""A serving engine's code: a shape that does not fit there comes from what the engine was
given (flags, a model or adapter it does not support) or its own bug, never the user's layers."""
_FRAMEWORK = compile_re(
    r"/(?:vllm|sglang|transformers|trl|accelerate|deepspeed|lightning|lightning_fabric|"
    r"pytorch_lightning|megatron|peft|lmcache|verl|torchtune)/"
)


@cache
def _missing() -> re.Pattern[str]:
    """A library, a build of it or a version of it that is not there (after the failure's
    kind: a container runtime's missing driver library is the driver's failure)."""
    return compile_re(
        r"cannot open shared object file|libnvrtc|\bCUDA_HOME\b|"
        r"got an unexpected keyword argument|'type' object is not subscriptable|"
        r"\brequires (?:PyTorch|torch|transformers|Python) ?>=|operator \S+ does not exist|"
        r"module is not (?:found|available|installed)|"
        # versions that do not fit each other, and a module or class whose API moved
        r"\bversion \(?v?[\d.]+\)? does not match|is only supported (?:for|with|from) `?(?:torch|transformers|Python)\b|"
        r"maximum version [\d.]+ is supported|\bmodule '[\w.]+' has no attribute|"
        r"\[WinError 126\]|Error loading \S*\.dll|"
        # a program telling what to install
        r"\bPlease (?:pip )?install\b|\bis not installed\b|"
        # a version too old or too new for another package, or an API a version removed
        r"\bversion of [\w.-]+ (?:you are using|installed) is not compatible\b|"
        r"\bminimum (?:required|supported) version\b|\b(?:has been|was) removed in (?:v|version )?\d+\.\d|"
        r"\brequires [A-Za-z][A-Za-z0-9.-]{2,} ?(?:>=|==|~=) ?v?\d|\b(?:use|install|upgrade to) (?:a )?version ?>=|"
        # a compiled extension called with the arguments of another build of it; generated
        # code older than its runtime; a file written by a newer release; "please upgrade"
        r"\bincompatible function arguments\b|Descriptors cannot (?:not )?be created directly|"
        r"kMaxSupportedFileFormatVersion|\bplease (?:try )?upgrad(?:e|ing)\b|"
        # a compiler backend that failed on an import (a Triton another torch expects)
        r"raised: (?:ImportError|ModuleNotFoundError)\b"
    )


@cache
def _by_path() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The raising frame's file: a failure raised inside an attention backend or a quantization
    method is about that backend or method (compiled on first use)."""
    return (
        (
            compile_re(r"[/\\]attention[/\\]|attention\.py$|flash_attn|flashinfer|xformers"),
            "attention-backend-unsupported",
        ),
        (compile_re(r"[/\\]quantization[/\\]"), "quantization-unsupported"),
        # an OpenAI server's chat/responses handler, its tool-call and reasoning parsers, and
        # the processors that put images into a prompt: what a chat template, a tokenizer or a
        # processor made of the request
        (
            compile_re(
                r"[/\\]entrypoints[/\\]openai[/\\](?:\w+[/\\])*serving\w*\.py$|[/\\]tool_parsers?[/\\]|"
                r"[/\\]reasoning(?:_parser)?[/\\]|harmony_utils\.py$|[/\\]multimodal[/\\]processors?[/\\]|"
                r"[/\\]multimodal[/\\]processing\.py$|image_processing_\w+\.py$|[/\\]processing_\w+\.py$|"
                r"[/\\]mm_utils\.py$"
            ),
            "tokenizer-error",
        ),
        # transformers' Auto classes raise on a model type they do not know
        (compile_re(r"models[/\\]auto[/\\]\w+_auto\.py$"), "model-arch-unsupported"),
    )
