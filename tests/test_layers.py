"""The tree shows the pipeline: imports only go down it, no module imports itself back through
another, and no module passes 500 lines."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "tracelens"

# lowest first; a module may import from its own layer or any layer below it
LAYERS = [
    (
        "tracelens.paths",
        "tracelens.regex",
        "tracelens.pyregex",
        "tracelens.literals",
        "tracelens.models",
        "tracelens.keyvalues",
    ),
    ("tracelens.facts",),
    ("tracelens.read",),
    ("tracelens.parse",),
    ("tracelens.rulebook",),
    ("tracelens.engine",),
    ("tracelens.render",),
    ("tracelens.incidents",),
    ("tracelens.fleet",),
    ("tracelens.authoring",),
    ("tracelens.tui",),
    ("tracelens.cli", "tracelens.__main__"),
]
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int | None:
    for k, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return k
    return None


def _imports(name: str, path: Path) -> set[str]:
    """tracelens modules ``name`` imports, at the top or inside functions (not those for type
    checkers only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    typing_only = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for sub in ast.walk(stmt)
    }  # imports for type checkers only: never executed, no loop at run time
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("tracelens"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if not base.startswith("tracelens"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in MODULES else base)
    out.discard(name)
    return out


@functools.cache
def graph() -> dict[str, set[str]]:
    """What each module imports (read when a test asks, not while the tests are collected)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n != "tracelens"))
def test_imports_go_down_the_pipeline(name):
    mine = _layer(name)
    assert mine is not None, f"{name} is in no layer of the pipeline"
    up = sorted(dep for dep in graph()[name] if dep != "tracelens" and (_layer(dep) or 0) > mine)
    assert not up, f"{name} reaches up the pipeline to {up}"


def test_no_import_loops():
    # Tarjan's strongly connected components over the module graph
    GRAPH = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    loops: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH.get(v, ()):
            if w not in GRAPH:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # the package __init__ re-exports the library entry point lazily: not a loop
            if len(comp) > 1 and "tracelens" not in comp:
                loops.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert loops == []


def test_modules_stay_short():
    long = []
    for path in MODULES.values():
        if path.parent.name == "grammars" and path.name == "traceback_table.py":
            continue  # the generated parse table
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(PKG.parent)} has {lines} lines")
    assert len(MODULES) > 100 and long == []
