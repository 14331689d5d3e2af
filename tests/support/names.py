"""The string constants of the product packages, for the tests that look for a registered
name (a target, a workload, a fault) written outside the module that defines it and its
registry. Docstrings are left out: prose may name anything."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "checkers", "workloads", "clusters", "nemesis", "harness")


def strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of ``tree`` that are not docstrings."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def product_strings() -> Iterator[tuple[str, ast.Constant]]:
    """Each product module's path (relative, with slashes) with each of its strings."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if ".cache" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            for node in strings(ast.parse(path.read_text(encoding="utf-8"), rel)):
                yield rel, node
