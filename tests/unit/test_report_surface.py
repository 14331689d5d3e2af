"""The report's private modules (``harness/report/_*.py``) are its own: every other
module reads the report through the package's face (``harness.report``, its ``__all__``),
lazily or not. The face names only what its homes define, and loads nothing on import."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

from test_workload_surface import imports

import harness.report as report
from tests.support.names import ROOT

PACKAGES = ("core", "checkers", "workloads", "clusters", "nemesis", "harness", "scripts")


def private_imports() -> list[str]:
    """Where a module outside ``harness/report/`` imports one of its private modules."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in PACKAGES or rel.parts[:2] == ("harness", "report"):
            continue
        for line, module in imports(path):
            if module.startswith("harness.report._"):
                found.append(f"{rel.as_posix()}:{line}: {module}")
    return found


def test_no_module_outside_the_report_imports_its_private_modules() -> None:
    found = private_imports()
    assert found == [], "import the report's face instead: " + "; ".join(found)


def test_the_face_gives_every_name_it_lists() -> None:
    for name in report.__all__:
        home = report._HOMES[name]
        assert getattr(report, name) is getattr(import_module(home), name), name


def test_importing_the_face_loads_no_private_module() -> None:
    code = (
        "import sys, harness.report; "
        "print([m for m in sys.modules if m.startswith('harness.report.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
