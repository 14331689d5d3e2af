"""A workload owns its whole surface (issue 31): adding one touches its own modules, its
checker, one registry line and one offer per target that runs it. So ``core/`` and
``harness/`` never name a workload: none of their modules imports a workload's own modules
(the module of its ``Workload``, the modules of its options records and of its package,
when it has one), lazily or not; they read ``workloads.workload_registry``. (No string of theirs
spells a workload's name either: ``tests/unit/test_registered_names.py``.) Nor does a
module of theirs carry a workload's part under its own name - a report section is the
workload's (``Workload.sections``): no module of ``core/`` or ``harness/`` is named for a
workload, its package, or a checker module only that workload's checkers use."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tests.support.names import ROOT
from workloads.workload import When, Workload
from workloads.workload_registry import WORKLOADS

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


def _checker_modules(path: Path) -> set[str]:
    """The modules of ``checkers/`` that ``path`` imports (``from checkers import x``
    counted as ``checkers.x`` when that is a module)."""
    found = set()
    for _, module in imports(path):
        if module.startswith("checkers.") and (ROOT / (module.replace(".", "/") + ".py")).exists():
            found.add(module)
    return found


def workload_words() -> dict[str, str]:
    """Each word a module named for a workload would carry -> the workload: its name (``-``
    as ``_``), its package's, and the name of every checker module that only its
    checkers use (the checkers it names, and the modules of ``checkers/`` only those
    import: ``checkers.membership`` is the registry workload's through
    ``checkers.discovery``)."""
    used: dict[str, set[str]] = {}
    for w in WORKLOADS.values():
        for c in w.checkers:
            checker = c.checker if isinstance(c, When) else c
            used.setdefault(checker.__module__, set()).add(w.name)
    own = {m: next(iter(ws)) for m, ws in used.items() if len(ws) == 1}
    importers: dict[str, set[str]] = {}
    for path in (ROOT / "checkers").rglob("*.py"):
        me = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for module in _checker_modules(path):
            importers.setdefault(module, set()).add(me)
    grown = True
    while grown:  # a module only one workload's own modules import is its own too
        grown = False
        for module, by in importers.items():
            owners = {own.get(m) for m in by}
            if module not in own and module not in used and len(owners) == 1 and None not in owners:
                own[module], grown = owners.pop(), True
    words = {m.rpartition(".")[2]: name for m, name in own.items()}
    for name, module in _defining_modules().items():
        words[name.replace("-", "_")] = name
        package = module.rpartition(".")[0]
        if package != "workloads":
            words[package.rpartition(".")[2]] = name
    return words


def named_for(path: Path, words: dict[str, str]) -> str | None:
    """The workload ``path``'s module is named for (``_herd.py``: herd), if any."""
    return words.get(path.stem.lstrip("_"))


def test_core_and_harness_hold_no_module_named_for_a_workload() -> None:
    words = workload_words()
    found = [
        f"{path.relative_to(ROOT).as_posix()} (the {named_for(path, words)} workload's)"
        for package in LOOKED_AT
        for path in sorted((ROOT / package).rglob("*.py"))
        if named_for(path, words) is not None
    ]
    assert found == [], "a workload's part outside its package: " + "; ".join(found)


def test_the_rule_knows_the_sections_that_lived_in_the_report() -> None:
    """What ``harness/report`` held before the workloads declared their sections."""
    words = workload_words()
    report = ROOT / "harness" / "report"
    was = {n: named_for(report / f"_{n}.py", words) for n in ("herd", "ids", "membership", "watch")}
    assert was == {"herd": "herd", "ids": "unique-ids", "membership": "registry", "watch": "watch"}
    assert named_for(report / "_timeline.py", words) is None
