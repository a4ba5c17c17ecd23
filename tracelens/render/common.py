"""Pieces shared by the renderers."""

from __future__ import annotations

import re

from tracelens.models import Report

IMPORTANT_FACTS = (
    "vllm_version",
    "sglang_version",
    "torch_version",
    "transformers_version",
    "accelerate_version",
    "cuda_version",
    "driver_version",
    "python_version",
    "nccl_version",
    "model",
    "model_path",
    "architecture",
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "kv_cache_dtype_arg",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "max_model_len",
    "attention_backend",
    "rejected_backends",
    "gpu_name",
    "gpu_count",
    "compute_capability",
    "exit_code",
    "signal",
)


def summary_counts(report: Report) -> str:
    """What was read and found: lines, streams, tracebacks, error lines, diagnoses."""
    doc = report.document
    n = len(report.diagnoses)
    scope = "" if doc.full_parse else " (large log: parsed around the trouble)"
    return (
        f"{doc.line_count} lines, {len(doc.streams)} stream(s), "
        f"{len(doc.tracebacks)} traceback(s), {len(doc.errors)} error line(s){scope} -> "
        f"{n} diagnos{'is' if n == 1 else 'es'}"
    )


def summary_line(report: Report) -> str:
    return f"tracelens: {report.document.source}: {summary_counts(report)}"


# --- escaping log text for each markup -------------------------------------------------------
# Text from a log (messages, titles of failures no rule knows, paths, fact values) is data: in
# every sink it must read as the characters it is, never as markup. The patterns are compiled
# (and cached by ``re``) when a Markdown or Jira report is first written.

_MD_SPECIAL = r"([\\`*_{}\[\]<>()#+!|~&])"
_MD_LINE_START = r"(?m)^(\s*)([-=>+]|\d+[.)])"
_MENTION = r"@(?=\w)"


def md_text(text: str) -> str:
    """Log text as literal Markdown (a heading, a list item, a paragraph): emphasis, links,
    images, HTML, table pipes and line-start markers escaped; ``@name`` mentions defused with
    a zero-width space.

    >>> print(md_text("[click](http://x) ![i](y) **b**"))
    \\[click\\]\\(http://x\\) \\!\\[i\\]\\(y\\) \\*\\*b\\*\\*
    """
    text = re.sub(_MD_SPECIAL, r"\\\1", str(text))
    text = re.sub(_MD_LINE_START, lambda m: m.group(1) + "\\" + m.group(2), text)
    return re.sub(_MENTION, "@\u200b", text)


def md_line(text: str) -> str:
    """:func:`md_text` on one line (a heading or a table cell cannot hold a line break)."""
    return md_text(" ".join(str(text).splitlines()))


def md_code(text: str) -> str:
    """Inline code that holds any text: the backtick run is longer than any inside it, and a
    pipe is escaped so the cell of a table stays whole.

    >>> print(md_code("a`b"), md_code("x|y"))
    ``a`b`` `x\\|y`
    """
    text = " ".join(str(text).splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


_JIRA_SPECIAL = r"([\\{}\[\]*_+^~!|#?\-])"
_JIRA_MACRO = r"(?i)\{(noformat|code|quote|panel|color|html)"


def jira_text(text: str) -> str:
    """Log text as literal Jira wiki markup: macros (``{color}``, ``{noformat}``), links,
    images, tables, emphasis and list markers escaped; one line.

    >>> print(jira_text("[x|http://e] !img.png! {color:red}"))
    \\[x\\|http://e\\] \\!img.png\\! \\{color:red\\}
    """
    return re.sub(_JIRA_SPECIAL, r"\\\1", " ".join(str(text).splitlines()))


def jira_block(text: str) -> str:
    """Text in a ``{noformat}`` block that no line inside can end or turn into another macro."""
    return "{noformat}\n" + re.sub(_JIRA_MACRO, r"{ \1", str(text)) + "\n{noformat}"


def jira_link(url: str) -> str:
    """A reference: a plain http(s) URL as it is (Jira links it), anything else escaped."""
    if re.fullmatch(r"https?://[^\s\[\]|{}!]+", url):
        return url
    return jira_text(url)


def md_link(url: str) -> str:
    """A reference: an autolink when it is a plain http(s) URL, literal text otherwise."""
    if re.fullmatch(r"https?://[^\s<>`]+", url):
        return f"<{url}>"
    return md_line(url)


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
        out.append(f"{k}. {md_line(r['title'])}{mark(r)}")
        for s in r.get("steps") or []:
            out.append(f"   - {md_line(s)}")
        if r.get("commands"):
            out += ["", "   " + fence("\n".join(r["commands"]), "sh").replace("\n", "\n   ")]
    return out


def important_facts(facts: dict[str, str]) -> list[tuple[str, str]]:
    """(name, value) of the facts that matter most, in IMPORTANT_FACTS order."""
    return [(n, facts[n]) for n in IMPORTANT_FACTS if n in facts]


def md_facts_table(rows: list[tuple[str, str]]) -> list[str]:
    """The facts that matter as a Markdown table (each value inline code that holds any text)."""
    if not rows:
        return []
    return ["| fact | value |", "|---|---|"] + [f"| {md_line(n)} | {md_code(v)} |" for n, v in rows]


EMPTY_LOG = (
    "The log is empty: there is nothing to diagnose (a job that printed nothing yet, or the wrong "
    "file or stream)."
)


def empty_log(report: Report) -> bool:
    """The log held nothing but blank lines (not evidence of a healthy run)."""
    return report.verdict == "empty"
