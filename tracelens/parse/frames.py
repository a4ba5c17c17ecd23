"""Which frames say nothing about a failure: the one predicate fingerprints and the TUI's
traceback view share (call and dispatch plumbing, the standard library); and whether frames
show a package being imported."""

from __future__ import annotations

from tracelens.models import Frame
from tracelens.pyregex import compile_re

# Modules (prefixes) and functions whose frames say nothing about the failure.
SKIP_MODULES = (
    "torch.nn.modules.module",
    "torch.utils._contextlib",
    "torch._dynamo.eval_frame",
    "torch.distributed.elastic.multiprocessing.errors",
    "multiprocessing.",
    "asyncio.",
    "concurrent.futures.",
    "threading",
    "runpy",
    "importlib.",
    "contextlib",
    "functools",
    "uvloop.",
    "click.",
    "typer.",
    "ray._private.worker",
    "ray._private.function_manager",
    "vllm.utils.func_utils",
    "vllm.v1.executor.multiproc_executor",
    "vllm.v1.engine.utils",
)
SKIP_FUNCTIONS = frozenset(
    {
        "_call_impl",
        "_wrapped_call_impl",
        "decorate_context",
        "wrapper",
        "_fn",
        "inner",
        "<module>",
        "main",
        "run",
        "__call__",
        "<lambda>",
        "_run_module_as_main",
        "_run_code",
    }
)


def is_plumbing(frame: Frame, *, keep_module_level: bool = False) -> bool:
    """Generic call and dispatch plumbing (torch.nn call wrappers, multiprocessing, asyncio,
    decorators, runners). ``keep_module_level`` keeps ``<module>`` frames (a script's top)."""
    if frame.function in SKIP_FUNCTIONS and not (
        keep_module_level and frame.function == "<module>"
    ):
        return True
    mod = frame.module or ""
    return any(mod == m.rstrip(".") or mod.startswith(m) for m in SKIP_MODULES)


def is_stdlib(frame: Frame) -> bool:
    """A frame of Python's own library (or a frozen import-machinery frame)."""
    path = frame.file
    return path.startswith("<frozen") or ("/lib/python" in path and "-packages" not in path)


def importing(frames: list[Frame]) -> bool:
    """Whether the frames show an installed package's module-level code run by an ``import``
    line (the frame before it), not a module run as ``__main__`` (``python -m``, whose frame
    before is runpy's)."""
    for before, frame in zip(frames, frames[1:]):
        if frame.function == "<module>" and installed(frame.file):
            if (before.source or "").lstrip().startswith(("import ", "from ")):
                return True
    return False


def installed(path: str) -> bool:
    """An installed package's code (site-packages or dist-packages), not the user's own."""
    return _INSTALLED.search(path) is not None


_INSTALLED = compile_re(r"[/\\](?:site|dist)-packages[/\\]")
