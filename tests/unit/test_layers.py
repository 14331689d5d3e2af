"""The layers of ARCHITECTURE.md, read from the code's own imports: every module imports
only modules of its own layer or of the layers below, and no modules import each other in
a circle (lazy imports inside functions count: a cycle deferred to run time is still one).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LAYERS: dict[str, int] = {
    "core": 0,
    "checkers": 1,
    "workloads": 2,
    "clusters": 3,
    "nemesis": 4,
    "harness": 5,
}
"""Top-level package -> its floor: the ground floor imports nothing of the project, the
application (``harness``) stands on everything."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module by name: Python's, and those written in C (which import none of the
    project's)."""
    return {
        _module_name(p): p
        for package in LAYERS
        for suffix in ("*.py", "*.c")
        for p in sorted((ROOT / package).rglob(suffix))
        if ".cache" not in p.parts
    }


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The project module an import of ``name`` loads (its longest known prefix)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _loads_by_name(node: ast.AST) -> bool:
    """``importlib.import_module("a.module")``: an import all the same. (A registry's
    ``"module:attribute"`` references are declarations it resolves on use, not counted.)"""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    return name == "import_module" and isinstance(first, ast.Constant) and bool(first.value)


def _imports(module: str, path: Path) -> Iterator[str]:
    """The project modules ``module`` imports, anywhere in its code."""
    if path.suffix == ".c":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # ``from pkg import mod`` loads the module; ``from mod import name`` the module.
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        elif _loads_by_name(node):
            assert isinstance(node, ast.Call) and isinstance(node.args[0], ast.Constant)
            names = [str(node.args[0].value)]
        else:
            continue
        for name in names:
            found = _resolve(name)
            if found is not None and found != module:
                yield found


GRAPH: dict[str, set[str]] = {m: set(_imports(m, p)) for m, p in MODULES.items()}


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[0]]


def test_the_packages_are_read() -> None:
    assert len(MODULES) > 150
    assert "core.ops" in MODULES and "harness.cli" in MODULES


def _upward() -> list[str]:
    """The imports from a module to one on a higher floor."""
    return sorted(
        f"{m} -> {t}" for m, targets in GRAPH.items() for t in targets if _layer(t) > _layer(m)
    )


def test_no_import_runs_up_a_layer() -> None:
    assert _upward() == []


def _cycles() -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert _cycles() == []


def test_a_cycle_and_an_upward_import_are_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks above can fail: a made-up circle and a made-up upward arrow are found."""
    graph = {m: set(t) for m, t in GRAPH.items()}
    graph["core.ops"].add("core.history")
    graph["core.history"].add("core.ops")
    graph["core.ops"].add("harness.cli")
    monkeypatch.setattr(__import__(__name__, fromlist=["GRAPH"]), "GRAPH", graph)
    assert any({"core.history", "core.ops"} <= set(c) for c in _cycles())
    assert _upward() == ["core.ops -> harness.cli"]


def test_architecture_md_draws_these_layers() -> None:
    """ARCHITECTURE.md's drawing lists the packages top floor first, as LAYERS orders them."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    drawing = text.split("```")[1]
    drawn = [line.split("/")[0] for line in drawing.strip().splitlines()]
    assert drawn == sorted(LAYERS, key=LAYERS.__getitem__, reverse=True)


def test_architecture_md_names_files_that_exist() -> None:
    """Every path ARCHITECTURE.md names (in backquotes, with a slash, no placeholder) is
    there: at the root, or inside one of the packages."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = {
        p.rstrip("/")
        for p in re.findall(r"`([\w./-]+/[\w./-]*)`", text)
        if "<" not in p and not p.startswith(("results", "."))
    }
    bases = [ROOT, *(ROOT / package for package in LAYERS), ROOT / "checkers" / "linear"]
    missing = sorted(p for p in named if not any((base / p).exists() for base in bases))
    assert len(named) > 20
    assert missing == []


def test_a_module_imported_by_name_counts() -> None:
    """``importlib.import_module("m")`` is an import; a registry's ``"m:attr"`` is not."""
    calls = ast.parse('importlib.import_module("clusters.docker_cluster")\nx = "core.ops:Op"')
    assert [_loads_by_name(n) for n in ast.walk(calls) if isinstance(n, ast.Call)] == [True]
    assert "clusters.docker_cluster" in GRAPH["clusters.spec"]
