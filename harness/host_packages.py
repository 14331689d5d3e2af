"""What a suite needs installed on the machine that runs the harness, beyond the harness
itself: the Debian/Ubuntu packages its runs' faults declare (``FaultSpec.packages``), so a
CI job can install them before the suite, whose runs are all checked before the first
starts (``tests/unit/test_workflow_packages.py`` holds the workflows to it).

The suite is read without the checks that need those packages here (a run of the
client-clock fault is refused where libfaketime is missing): only the workload's defaults
are decided, its default fault among them.
"""

from __future__ import annotations

from pathlib import Path

from core.options import RunOptions
from harness.suite import load_suite
from nemesis.fault_registry import packages_of


def run_packages(opts: RunOptions) -> tuple[str, ...]:
    """The packages one run needs (its options decided: its default fault included)."""
    return packages_of(opts.fault_names())


def suite_packages(path: Path) -> dict[str, tuple[str, ...]]:
    """Each package the runs of the suite file ``path`` need -> the names of those runs,
    in the suite's order; a SuiteError (one line) for a suite that cannot be read."""
    needed: dict[str, list[str]] = {}
    for run in load_suite(path, check=False).runs:
        for package in run_packages(run.options):
            needed.setdefault(package, []).append(run.name)
    return {package: tuple(runs) for package, runs in needed.items()}
