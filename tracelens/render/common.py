"""Pieces shared by the renderers."""

from __future__ import annotations

from tracelens.models import Report

IMPORTANT_FACTS = (
    "vllm_version", "sglang_version", "torch_version", "transformers_version", "accelerate_version", "cuda_version",
    "driver_version", "python_version", "nccl_version", "model", "model_path", "architecture",
    "quantization", "dtype", "kv_cache_dtype", "kv_cache_dtype_arg", "tensor_parallel_size",
    "pipeline_parallel_size", "data_parallel_size", "max_model_len", "attention_backend",
    "rejected_backends", "gpu_name", "gpu_count", "compute_capability", "exit_code", "signal",
)


def summary_line(report: Report) -> str:
    doc = report.document
    n = len(report.diagnoses)
    scope = "" if doc.full_parse else " (large log: parsed around the trouble)"
    return (
        f"tracelens: {doc.source}: {doc.line_count} lines, {len(doc.streams)} stream(s), "
        f"{len(doc.tracebacks)} traceback(s), {len(doc.errors)} error line(s){scope} -> "
        f"{n} diagnos{'is' if n == 1 else 'es'}"
    )


def fence(text: str, lang: str = "") -> str:
    """A Markdown code fence that survives backticks inside the text."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def md_remedies(remedies: list[dict], mark=lambda remedy: "") -> list[str]:
    """Remedies (as dicts) as a numbered Markdown list: steps as bullets, commands fenced;
    ``mark(remedy)`` adds text after a title."""
    out: list[str] = []
    for k, r in enumerate(remedies, 1):
        out.append(f"{k}. {r['title']}{mark(r)}")
        for s in r.get("steps") or []:
            out.append(f"   - {s}")
        if r.get("commands"):
            out += ["", "   " + fence("\n".join(r["commands"]), "sh").replace("\n", "\n   ")]
    return out


def important_facts(facts: dict[str, str]) -> list[tuple[str, str]]:
    """(name, value) of the facts that matter most, in IMPORTANT_FACTS order."""
    return [(n, facts[n]) for n in IMPORTANT_FACTS if n in facts]


def md_facts_table(rows: list[tuple[str, str]]) -> list[str]:
    """The facts that matter as a Markdown table (pipes in values escaped)."""
    if not rows:
        return []
    cells = [(n, str(v).replace("|", "\\|")) for n, v in rows]
    return ["| fact | value |", "|---|---|"] + [f"| {n} | `{v}` |" for n, v in cells]

