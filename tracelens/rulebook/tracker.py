"""Where to search for a failure no rule knows: the upstream tracker of the package that raised
it, queried with the failure's words (numbers, paths and ids left out)."""

from __future__ import annotations

import urllib.parse

from tracelens.rulebook.origin import Origin

# where to search for a failure raised in a package
_TRACKER = {
    "vllm": "vllm-project/vllm",
    "sglang": "sgl-project/sglang",
    "torch": "pytorch/pytorch",
    "transformers": "huggingface/transformers",
    "peft": "huggingface/peft",
    "trl": "huggingface/trl",
    "accelerate": "huggingface/accelerate",
    "huggingface_hub": "huggingface/huggingface_hub",
    "datasets": "huggingface/datasets",
    "deepspeed": "deepspeedai/DeepSpeed",
    "flash_attn": "Dao-AILab/flash-attention",
    "bitsandbytes": "bitsandbytes-foundation/bitsandbytes",
    "triton": "triton-lang/triton",
    "ray": "ray-project/ray",
    "flashinfer": "flashinfer-ai/flashinfer",
    "xgrammar": "mlc-ai/xgrammar",
}


def search_url(origin: Origin, package: str) -> str:
    from tracelens.parse.normalize import normalize

    if origin.hang is not None and origin.frame is not None:
        query = f"hang {origin.frame.function}"  # the wait is the failure, not the Ctrl-C
    else:
        if origin.message.strip():
            said = origin.message.strip().splitlines()[0]
        elif origin.type:
            # a bare exception (an assert without a message): where it was raised says what failed
            frame = origin.frame
            said = f"{frame.function or ''} {frame.source or ''}" if frame is not None else ""
        else:
            said = origin.text
        words = [w for w in normalize(said).split() if not w.startswith("<")]
        query = " ".join(words[:12])
        if origin.type:
            query = f"{origin.type.rsplit('.', 1)[-1]} {query}".strip()
    repo = _TRACKER.get(package)
    params = urllib.parse.urlencode(
        {"q": f"{query} is:issue" + (f" repo:{repo}" if repo else ""), "type": "issues"}
    )
    return f"https://github.com/search?{params}"
