"""A module's name says which clock or which registry it is (issue 31).

The rule: no module of the six packages (core, checkers, workloads, clusters, nemesis,
harness) is named a bare ``clock.py`` or ``registry.py``; a registry is named for its one
concept (``<concept>_registry.py``: targets, faults, workloads, lock libraries) and a clock
module for what it does to which clock (``run_clock.py``, ``wall_clock.py``,
``faketime_skew.py``, ...). The one exception is a fault's own module in ``nemesis/faults/``,
named as its fault is (``--nemesis clock``: ``nemesis/faults/clock.py``); every module
there must be so named. And no two modules named for a clock or a registry share a file
name, so that the name alone says which one is meant.
"""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

from nemesis.spec import FaultSpec
from tests.support.names import ROOT

PACKAGES = ("core", "checkers", "workloads", "clusters", "nemesis", "harness")
BARE = ("clock.py", "registry.py")
WORDS = ("clock", "registry")
FAULTS = "nemesis/faults"
"""The folder whose modules are named for the fault each registers."""


def _modules(root: Path) -> list[Path]:
    """Every Python module of the six packages, relative to ``root``."""
    return sorted(
        p.relative_to(root)
        for pkg in PACKAGES
        if (root / pkg).is_dir()
        for p in (root / pkg).rglob("*.py")
    )


def bare_names(root: Path) -> list[str]:
    """The modules named a bare ``clock.py`` or ``registry.py`` outside ``nemesis/faults/``."""
    return [
        p.as_posix() for p in _modules(root) if p.name in BARE and p.parent.as_posix() != FAULTS
    ]


def shared_names(root: Path) -> dict[str, int]:
    """File names of modules named for a clock or a registry that more than one bears."""
    named = Counter(p.name for p in _modules(root) if any(w in p.stem for w in WORDS))
    return {name: n for name, n in named.items() if n > 1}


def test_no_module_outside_the_faults_is_named_a_bare_clock_or_registry() -> None:
    assert bare_names(ROOT) == []


def test_no_two_clock_or_registry_modules_share_a_name() -> None:
    assert shared_names(ROOT) == {}


def test_every_fault_module_is_named_for_its_fault() -> None:
    """``nemesis/faults/<fault>.py`` holds the ``FAULT`` of that name, '-' spelt '_'."""
    misnamed = []
    for path in sorted((ROOT / FAULTS).glob("*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"{FAULTS.replace('/', '.')}.{path.stem}")
        fault = getattr(module, "FAULT", None)
        if not isinstance(fault, FaultSpec) or fault.name.replace("-", "_") != path.stem:
            misnamed.append((path.name, getattr(fault, "name", None)))
    assert misnamed == []


def test_the_rules_catch_a_bare_clock_and_a_shared_name(tmp_path: Path) -> None:
    """The checks above can fail: a bare ``checkers/clock.py`` and ``harness/registry.py``
    are named, a fault's ``nemesis/faults/clock.py`` is not (but shares its name with the
    bare one), and so are two ``host_clock.py``. (Not the old modules' paths: the renaming
    script would rewrite those.)"""
    for rel in (
        "checkers/clock.py",
        "harness/registry.py",
        "nemesis/faults/clock.py",
        "workloads/host_clock.py",
        "clusters/remote/host_clock.py",
        "harness/options.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert bare_names(tmp_path) == ["checkers/clock.py", "harness/registry.py"]
    assert shared_names(tmp_path) == {"clock.py": 2, "host_clock.py": 2}
