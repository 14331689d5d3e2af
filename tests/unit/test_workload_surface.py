"""A workload owns its whole surface (issue 31): adding one touches its own modules, its
checker, one registry line and one offer per target that runs it. So ``core/`` and
``harness/`` never name a workload: none of their modules imports a workload's own modules
(the module of its ``Workload``, the modules of its options records and of its package,
when it has one), lazily or not; they read ``workloads.registry``. (No string of theirs
spells a workload's name either: ``tests/unit/test_registered_names.py``.)"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tests.support.names import ROOT
from workloads.registry import WORKLOADS
from workloads.workload import Workload

LOOKED_AT = ("core", "harness")


def _defining_modules() -> dict[str, str]:
    """Workload name -> the module (dotted) whose ``WORKLOAD`` is it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "workloads").rglob("*.py")):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        value = getattr(importlib.import_module(dotted), "WORKLOAD", None)
        if isinstance(value, Workload):
            found[value.name] = dotted
    return found


def own_modules() -> dict[str, str]:
    """Each workload's own modules (dotted; a package stands for all of its modules) ->
    the workload's name."""
    own: dict[str, str] = {}
    for name, module in _defining_modules().items():
        package = module.rpartition(".")[0]
        own[module if package == "workloads" else package] = name
        for record in WORKLOADS[name].records:
            own.setdefault(record.__module__, name)
    return own


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, those inside functions too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def naming(own: dict[str, str]) -> list[str]:
    """Where a module of ``LOOKED_AT`` imports one of ``own``."""
    found = []
    for package in LOOKED_AT:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, module in imports(path):
                hit = next((m for m in own if module == m or module.startswith(m + ".")), None)
                if hit is not None:
                    found.append(f"{rel}:{line}: {module} (the {own[hit]} workload's)")
    return found


def test_every_workload_has_own_modules() -> None:
    own = own_modules()
    assert set(own.values()) == set(WORKLOADS)


def test_core_and_harness_name_no_workload() -> None:
    found = naming(own_modules())
    assert found == [], "core/ or harness/ names a workload: " + "; ".join(found)


def test_the_search_finds_an_import_of_a_workloads_module(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from workloads.herd import HerdOptions\n")
    own = own_modules()
    hits = [m for _, m in imports(planted) if any(m.startswith(o) for o in own)]
    assert hits and all(own[o] == "herd" for o in own if hits[0].startswith(o))
