"""A readable summary of a parsed document (``tracelens parse``)."""

from __future__ import annotations

from tracelens.models import Document, Traceback


def _tb_lines(tb: Traceback, indent: str = "  ") -> list[str]:
    exc = tb.exception
    head = (
        f"{exc.type}: {exc.message.splitlines()[0] if exc.message else ''}"
        if exc
        else "(no exception line)"
    )
    flags = []
    if tb.truncated:
        flags.append("truncated")
    if tb.kind != "python":
        flags.append(tb.kind)
    if len(tb.segments) > 1:
        flags.append(f"{len(tb.segments)} chained")
    streams = ", ".join(s or "(main)" for s in tb.streams) or tb.stream or "(main)"
    out = [
        f"{indent}line {tb.start_line}-{tb.end_line}: {head}"
        + (f"  [{', '.join(flags)}]" if flags else "")
    ]
    copies = len(tb.lines) or 1
    times = f"{copies} times, " if copies > 1 else ""
    out.append(f"{indent}  seen {times}on {len(tb.streams) or 1} stream(s): {streams}")
    frames = tb.frames
    for f in frames[-4:]:
        out.append(f"{indent}  at {f.module or f.file}:{f.lineno} in {f.function}")
    if exc is not None:
        for sub in exc.nested:
            out += _tb_lines(sub, indent + "    ")
    return out


def render_document_text(doc: Document) -> str:
    scope = "whole log" if doc.full_parse else "regions around the trouble"
    out = [
        f"{doc.source}: {doc.line_count} lines, {doc.size} bytes, {doc.encoding}, parsed: {scope}",
        "",
    ]
    out.append(f"Streams ({len(doc.streams)}):")
    for s in doc.streams:
        out.append(f"  {s.id or '(main)'}: {s.records} lines, {s.first_line}-{s.last_line}")
    out += ["", f"Tracebacks ({len(doc.tracebacks)}):"]
    for tb in doc.tracebacks:
        out += _tb_lines(tb)
    failures = sum(1 for e in doc.errors if e.kind not in ("level", "exception"))
    out += [
        "",
        f"Failure and error lines ({len(doc.errors)}; {failures} failure line(s) of a known shape):",
    ]
    for e in doc.errors[:50]:
        out.append(f"  line {e.line} [{e.kind}] {e.text[:200]}")
    if len(doc.errors) > 50:
        out.append(f"  … {len(doc.errors) - 50} more")
    out += ["", "Facts:"]
    for name, f in sorted(doc.fact_map().items()):
        out.append(f"  {name} = {f.value}  (line {f.line}{', inferred' if f.derived else ''})")
    return "\n".join(out)
