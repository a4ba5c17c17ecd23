"""The table of fact extractors: each a cheap literal trigger, an RE2 regex and the fact it
gives (:func:`tracelens.facts.extract` runs them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracelens.regex import compile_regex


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
    also: tuple[str, ...] = ()
    """Other literals, any of which triggers the regex too: the trigger is then one of several
    words the regex requires, none of which every match holds."""

    @property
    def triggers(self) -> tuple[str, ...]:
        """Every literal that triggers the regex."""
        return (self.trigger, *self.also)

    @property
    def pattern(self) -> Any:
        """The RE2 regex."""
        return compile_regex(self.source)


def _x(
    trigger: str | tuple[str, ...],
    pattern: str,
    name: str | None = None,
    priority: int = 0,
    scan: bool = True,
) -> Extractor:
    """An extractor; ``trigger`` a literal, or several (any of them triggers the regex)."""
    first, *also = (trigger,) if isinstance(trigger, str) else trigger
    return Extractor(first, pattern, name, priority, scan, tuple(also))


# a version; a dot or a hyphen counts only when more of the version follows it ("found
# vllm==0.8.1." ends a sentence, pip's "(from torch==2.10.0->vllm==0.16.0)" chains requirements)
_VER = r"(?P<v>\d+\.\d+(?:[.-]?[\w+])*)"

_BRANDS = ("NVIDIA ", "Tesla ", "Quadro ")
"""The words an nvidia-smi CSV row's GPU name starts with (the triggers of its two rows)."""

EXTRACTORS: tuple[Extractor, ...] = (
    _x(
        "LLM engine (v",
        r"Initializing an? (?:V[01] )?LLM engine \(v" + _VER + r"\)",
        "vllm_version",
        2,
    ),
    _x("vLLM API server version", r"vLLM API server version " + _VER, "vllm_version", 2),
    _x("vLLM Version", r"^vLLM Version\s*:\s*" + _VER, "vllm_version", 3),
    # pip's resolver: "sglang 0.5.19 requires transformers==5.12.1, but you have transformers
    # 4.57.6 which is incompatible." - the installed version is the one after "you have"
    *(
        _x(
            "but you have",
            rf"but you have {pkg} (?P<v>\d+\.\d+[\w.+-]*) which is incompatible",
            f"{pkg}_version",
            3,
            scan=False,
        )
        for pkg in ("vllm", "torch", "transformers", "triton")
    ),
    _x("vllm==", r"(?P<req>requires )?\bvllm==" + _VER, "vllm_version", 1),
    _x("sglang", r"\bsglang(?:==|:\s*|\s+version\s*)" + _VER, "sglang_version", 1, scan=False),
    # collect_env ("PyTorch version: 2.4.0") and the `accelerate env` / `transformers env`
    # lists ("- PyTorch version (GPU?): 2.4.0+cu124 (True)", "- `Accelerate` version: 0.34.0")
    _x(
        "PyTorch version",
        r"^(?:- )?PyTorch version(?: \(GPU\?\))?\s*:\s*" + _VER,
        "torch_version",
        3,
    ),
    _x(" version: ", r"^- `?Accelerate`? version\s*:\s*" + _VER, "accelerate_version", 3),
    _x(" version: ", r"^- `?[Tt]ransformers`? version\s*:\s*" + _VER, "transformers_version", 3),
    _x("torch==", r"(?P<req>requires )?\btorch==" + _VER, "torch_version", 1),
    # a `pip list` / `conda list` row ("torch                    2.10.0+cu128") and a script's own
    # version line ("torch 2.6.0+cu124, triton 3.2.0", "... | torch 2.10.0+cu128, transformers 4.57.3",
    # "PyTorch 2.7.0+cu126, CUDA 12.6");
    # a full version (three numbers) so that prose ("torch 2.1 changed ...") is not taken
    _x(
        "torch ",
        r"(?:^|[,|;]\s*|\| )(?:py)?torch\s+(?P<v>\d+\.\d+\.\d+(?:[\w+-]|\.[\w+-])*)\.?(?:[\s,|;)]|$)",
        "torch_version",
        0,
        scan=False,
    ),
    _x(
        "PyTorch ",
        # not prose about a release ("In PyTorch 1.1.0 and later, you should call them ...")
        r"(?P<req>\b(?i:in|since|before|after|from|until) )?"
        r"\bPyTorch (?P<v>\d+\.\d+\.\d+(?:[\w+-]|\.[\w+-])*)\.?(?:[\s,|;)]|$)",
        "torch_version",
        scan=False,
    ),
    _x(
        "transformers ",
        r"(?:^|[,|;]\s*|\| )transformers\s+(?P<v>\d+\.\d+\.\d+(?:[\w+-]|\.[\w+-])*)\.?(?:[\s,|;)]|$)",
        "transformers_version",
        0,
        scan=False,
    ),
    _x(
        "transformers",
        r"(?P<req>requires )?\btransformers(?:==|\s+version\s*[:=]?\s*)" + _VER,
        "transformers_version",
        1,
        scan=False,
    ),
    _x("triton==", r"(?P<req>requires )?\btriton==" + _VER, "triton_version", 1),
    # the devices' compute capability as sglang.check_env lists it ("GPU 0,1 Compute
    # Capability: 12.0") and trtexec prints it ("[I] Compute Capability: 8.9")
    _x(
        "Compute Capability: ",
        r"^(?:GPU [\d,]+ )?Compute Capability: (?P<v>\d{1,2}\.\d)\b",
        "compute_capability",
        2,
    ),
    # the speculative decoding method: vLLM's engine config
    # ("speculative_config=SpeculativeConfig(method='eagle3', ..."), its non-default args
    # ("'speculative_config': {'method': 'mtp', ..."), SGLang's ServerArgs
    # ("speculative_algorithm='EAGLE3'")
    _x(
        ("SpeculativeConfig(method=", "speculative_config", "speculative_algorithm="),
        r"(?:SpeculativeConfig\(method=|['\"]speculative_config['\"]: \{['\"]method['\"]: "
        r"|speculative_algorithm=)['\"](?P<v>\w+)['\"]",
        "speculative_method",
        2,
    ),
    # DeepSpeed's banner at deepspeed.initialize ("DeepSpeed info: version=0.16.4, git-hash=...",
    # deepspeed/__init__.py) and ds_report's row ("deepspeed info ....... 0.14.4, unknown, unknown")
    _x("DeepSpeed info: version=", r"DeepSpeed info: version=" + _VER, "deepspeed_version", 2),
    _x("deepspeed info ..", r"\bdeepspeed info \.{3,} " + _VER, "deepspeed_version", 3),
    _x("deepspeed==", r"(?P<req>requires )?\bdeepspeed==" + _VER, "deepspeed_version", 1),
    # pip lists (collect_env's "[pip3] transformer_engine_torch==2.1.0", pip freeze)
    _x(
        ("transformer_engine", "transformer-engine"),
        r"\btransformer[-_]engine(?:[-_](?:torch|cu12))?==" + _VER,
        "transformer_engine_version",
        1,
    ),
    _x(
        ("megatron-core==", "megatron_core=="),
        r"(?P<req>requires )?\bmegatron[-_]core==" + _VER,
        "megatron_core_version",
        1,
    ),
    # a container image's tag, where a Kubernetes event, a docker command or a manifest names
    # it: "vllm/vllm-openai:v0.9.0", "lmsysorg/sglang:v0.4.6.post1-cu124",
    # "pytorch/pytorch:2.1.0-cuda11.8-cudnn8-devel" (NGC's "nvcr.io/nvidia/pytorch:24.05-py3"
    # is a release month, not a PyTorch version)
    _x(
        "vllm/vllm-openai:",
        r"\bvllm/vllm-openai:v?(?P<v>\d+\.\d+\.\d+(?:\.post\d+)?)\b",
        "vllm_version",
    ),
    _x(
        "lmsysorg/sglang:",
        r"\blmsysorg/sglang:v?(?P<v>\d+\.\d+\.\d+(?:\.post\d+)?)\b",
        "sglang_version",
    ),
    _x("pytorch/pytorch:", r"\bpytorch/pytorch:(?P<v>\d+\.\d+\.\d+)-", "torch_version"),
    # vLLM's and SGLang's choice of a faster kernel for a GPTQ/AWQ checkpoint
    _x(
        "during runtime. Using",
        r"The model is convertible to (?P<v>\w+) during runtime\. Using \w+ kernel",
        "quantization",
        1,
    ),
    _x("flashinfer", r"\bflashinfer(?:-python)?==" + _VER, "flashinfer_version", 1, scan=False),
    _x(
        "CUDA used to build PyTorch", r"CUDA used to build PyTorch\s*:\s*" + _VER, "cuda_version", 2
    ),
    _x("CUDA Version", r"CUDA Version:\s*" + _VER, "cuda_driver_api_version", 1),
    _x("CUDA runtime version", r"CUDA runtime version\s*:\s*" + _VER, "cuda_version", 1),
    _x("Driver Version", r"Driver Version:\s*(?P<v>[\d.]+)", "driver_version", 2),
    _x("driver version", r"[Dd]river version\s*:\s*(?P<v>[\d.]+)", "driver_version", 2),
    _x(
        "Python version",
        r"^(?:- )?Python version\s*:\s*(?P<v>\d+\.\d+(?:\.\d+)?)",
        "python_version",
        2,
    ),
    _x("NCCL version", r"NCCL version\s*:?\s*(?P<v>\d+\.\d+\.\d+)", "nccl_version", 1),
    # vLLM's / SGLang's pynccl ("vLLM is using nccl==2.21.5") and a pip list row of the wheel
    _x("nccl==", r"\bnccl==(?P<v>\d+\.\d+\.\d+)", "nccl_version", 1),
    _x(
        "nvidia-nccl-cu",
        r"^nvidia-nccl-cu\d+\s+(?P<v>\d+\.\d+\.\d+)",
        "nccl_version",
        0,
        scan=False,
    ),
    _x("Resolved architecture", r"Resolved architecture: (?P<v>\w+)", "architecture", 2),
    _x(
        "architectures",
        r"[Aa]rchitectures?[\"']?\s*[:=]\s*\[[\"'](?P<v>\w+)[\"']",
        "architecture",
        1,
    ),
    _x("Using max model len", r"Using max model len (?P<v>\d+)", "max_model_len", 3),
    _x(" backend", r"Using (?P<v>[A-Z][A-Z0-9_]+)(?: attention)? backend", "attention_backend", 2),
    _x(
        " backend",
        r"Using (?:AttentionBackendEnum|_Backend)\.(?P<v>\w+) backend",
        "attention_backend",
        2,
    ),
    _x(
        "GPU ",
        r"^GPU (?P<idx>\d+): (?P<v>NVIDIA [^\n(]+?|Tesla [^\n(]+?|AMD [^\n(]+?)\s*(?:\(UUID.*)?$",
        "gpu_name",
        2,
        scan=False,
    ),
    _x(
        "GPU models and configuration",
        r"GPU models and configuration\s*:\s*(?:GPU 0: )?(?P<v>(?:NVIDIA|Tesla|AMD) [^\n]+)",
        "gpu_name",
        2,
    ),
    _x(
        "NVIDIA",
        r"^\|\s+\d+\s+(?P<v>NVIDIA [\w -]+?)\s{2,}(?:On|Off)\s+\|",
        "gpu_name",
        1,
        scan=False,
    ),
    _x(
        "capability",
        # not a requirement ("Device compute capability 8.9 or higher required for FP8")
        r"compute capability (?:\(CC\) )?(?:of |is |= |: )?(?P<v>\d+\.\d+)(?P<req> or (?:higher|newer|above|later)|\+| required)?",
        "compute_capability",
        2,
    ),
    _x("capability", r"cuda capability (?P<v>\d+\.\d+)", "compute_capability", 2),
    # nvidia-smi --query-gpu=name,compute_cap --format=csv: "NVIDIA A100-SXM4-80GB, 8.0"
    _x(
        _BRANDS,
        r"^(?:NVIDIA|Tesla|Quadro) [^,]+, (?P<v>\d+\.\d+)\s*$",
        "compute_capability",
        2,
        scan=False,
    ),
    # nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv(,noheader):
    # "0, NVIDIA GeForce RTX 4090, 21786 MiB, 24564 MiB"
    _x(
        _BRANDS,
        r"^(?:\d+, )?(?P<v>(?:NVIDIA|Tesla|Quadro) [^,\n]*[^,\s]), (?:\d+ MiB|\d+ %|\d+\.\d+(?:,|\s*$))",
        "gpu_name",
        1,
        scan=False,
    ),
    # a script's own device line, alone or among others: "GPU: NVIDIA L4 (22.5 GB)",
    # "torch 2.1.1+cu121 | cuda available: True | device: NVIDIA GeForce RTX 3090 (24.0 GiB)"
    _x(
        ": NVIDIA ",
        r"(?:^\s*|[|;,]\s*)(?:GPU|[Dd]evice)(?: name)?\s*: (?P<v>NVIDIA [^(\n,|;]*[^(\n,|;\s])",
        "gpu_name",
        0,
        scan=False,
    ),
    _x("Current capability", r"Current capability: (?P<v>\d+)", "compute_capability_int", 2),
    _x("sm_", r"CUDA capability sm_(?P<v>\d+)", "sm", 2, scan=False),
    _x(
        "total capacity",
        r"GPU (?P<v>\d+) has a total capacity of (?P<gpu_memory_total>[\d.]+ [GM]iB)",
        "oom_gpu",
        1,
    ),
    _x("exitcode", r"exitcode\s*:\s*(?P<v>-?\d+)", "exit_code", 2, scan=False),
    _x(
        "Signal", r"Signal (?P<n>\d+) \((?P<v>SIG[A-Z]+)\) received by PID", "signal", 2, scan=False
    ),
    _x("rank", r"^\s*rank\s*:\s*(?P<v>\d+) \(local_rank", "failed_rank", 2, scan=False),
    _x("host", r"^\s*host\s*:\s*(?P<v>\S+)\s*$", "host", 1, scan=False),
    _x("Killed process", r"Out of memory: Killed process (?P<v>\d+)", "oom_killed_pid", 2),
    _x("code=killed", r"code=killed, status=\d+/(?P<v>[A-Z]+)", "signal_name", 2),
    _x("Exit code:", r"^\s*Exit code:\s+(?P<v>-?\d+)\s*$", "exit_code", 1),
    _x("exits with return code", r"exits with return code = (?P<v>-?\d+)\s*$", "exit_code", 1),
    _x(
        "Found GPU",
        r"Found GPU\d+ (?P<v>.+?) which is of (?:cuda|compute) capability",
        "gpu_name",
        1,
    ),
    _x("NCCL", r"NCCL version (?P<v>\d+\.\d+\.\d+)", "nccl_version", 1, scan=False),
    # Hugging Face scripts (TRL, the examples, LLaMA-Factory): the command line's
    # --model_name_or_path (also as a Python list's items), the arguments dataclass's repr,
    # JSON and YAML configs; never a frame's pretrained_model_name_or_path
    _x(
        "odel_name_or_path",
        r"--model[_-]name[_-]or[_-]path(?:=|'?,?\s+'?)(?P<v>[^\s'\",)\]}]+)|"
        r"\bmodel_name_or_path(?:\s*=\s*|[\"']\s*:\s*)[\"'](?P<v2>[^\s'\",)\]}]+)|"
        r"^\s*model_name_or_path:\s+[\"']?(?P<v3>[^\s'\"#]+)",
        "model",
        0,
        scan=False,
    ),
    # the Hub's command line: "huggingface-cli download ORG/NAME", "hf download ORG/NAME" (0.34+)
    _x(
        " download ",
        r"(?:^|[\s/$])(?:huggingface-cli|hf) download (?:--\S+ )*(?P<v>[\w.-]+/[\w.-]+)(?:\s|$)",
        "model",
        scan=False,
    ),
    _x(
        "odel-name-or-path",
        r"--model-name-or-path(?:=|'?,?\s+'?)(?P<v>[^\s'\",)\]}]+)",
        "model",
        0,
        scan=False,
    ),
)
