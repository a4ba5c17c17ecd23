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


_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"


def clean(text: str) -> str:
    """Text from the log, safe for a terminal: no C0 or C1 control characters (a log line
    must not move the cursor, retitle the window or open a hyperlink). (``re`` caches the
    pattern, compiled when a report is first written.)"""
    return re.sub(_CONTROL, "", text)


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
    longest = max(map(len, re.findall("`+", text)), default=0)
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


def _rank_of(report: Report) -> int:
    """Where a log's report goes in a summary of several: failing logs whose first diagnosis
    is a cause, then failing logs that show only a symptom, then warnings, then the rest."""
    verdict = report.verdict
    if verdict == "failed":
        return 0 if not report.diagnoses[0].secondary else 1
    return 2 if verdict == "warnings" else 3


def ranked(reports: list[Report]) -> list[Report]:
    """Reports on several logs, failures whose first diagnosis is a cause first, then
    symptoms, warnings and the rest (the order given kept within each)."""
    return sorted(reports, key=_rank_of)


def many_summary(reports: list[Report], fmt: str = "text") -> str:
    """The first lines of a report on several logs: each log's verdict and first diagnosis,
    failures before symptoms (the log to read first on top).

    >>> many_summary([])
    'tracelens: 0 logs'
    """
    ordered = ranked(reports)
    lines = []
    for rep in ordered:
        top = rep.diagnoses[0] if rep.diagnoses else None
        what = (
            f"{top.title} ({top.category}, {'symptom' if top.secondary else 'cause'})"
            if top
            else ""
        )
        lines.append(f"{rep.source}: {rep.verdict}" + (f": {what}" if what else ""))
    head = f"tracelens: {len(reports)} logs"
    if ordered and _rank_of(ordered[0]) == 0 and len(reports) > 1:
        head += f"; start with {ordered[0].source}, the first that shows a failure's cause"
    if fmt == "markdown":
        return "\n".join([f"## {md_line(head)}", ""] + [f"- {md_text(line)}" for line in lines])
    if fmt == "jira":
        return "\n".join(
            [f"h2. {jira_text(head)}", ""] + [f"* {jira_text(line)}" for line in lines]
        )
    return "\n".join([clean(head)] + [f"  {clean(line)}" for line in lines])
