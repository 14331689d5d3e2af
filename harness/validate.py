"""Every check of a run's options before anything starts, in one place for the command
line and suite files alike.

``decide`` is the one place where the defaults that depend on the workload are decided
from its registry entry (``workloads.registry``): the fault of a run that names none and
the op timeout that follows the work of a holding workload. ``RunOptions.validate`` checks
what the options say on their own (ranges, names, the schedule, the op timeout); this adds
what needs the registries: the workload and the target exist and the target can honour the
workload, lock, read mode, persistence and faults; sim bugs are known ones;
``--nemesis-target`` is a value each fault takes. Errors are one line (``HarnessError``).
"""

from __future__ import annotations

import importlib
from typing import Any

from core.errors import HarnessError
from core.options import OptionError, RunOptions
from harness.targets import TARGETS, resolve_target
from nemesis.targets import check_nemesis_target
from workloads.registry import get_workload


def decide(opts: RunOptions) -> None:
    """Decide the defaults of ``opts`` that depend on its workload (a one-line
    OptionError for an unknown workload)."""
    workload = get_workload(opts.workload)
    opts.decide(workload.default_fault, workload.holds)


def check_options(opts: RunOptions) -> None:
    """The options on their own: the workload's defaults decided, then
    ``RunOptions.validate`` with its facts (one-line OptionError)."""
    decide(opts)
    opts.validate(get_workload(opts.workload).holds)


def check_run(opts: RunOptions) -> None:
    """Raise a one-line HarnessError for anything ``opts`` cannot run as asked (its
    workload's defaults decided first)."""
    check_options(opts)
    check_nemesis_target(opts)
    target = resolve_target(opts.target)
    if not opts.ssh:  # an SSH run wraps the target and checks itself when it starts
        target.check_options(opts)
    _check_sim_bugs(opts)
    if opts.read_mode is not None and not getattr(target, "read_modes", ()):
        raise OptionError(f"{opts.target} has no read modes: leave out --read-mode")
    if opts.persistence is not None:
        from clusters.registry import TARGETS as CLUSTERS

        spec = CLUSTERS.get(opts.target)
        if spec is None:
            raise OptionError(f"{opts.target} has no persistence option: leave out --persistence")
        spec.check_persistence(opts.persistence)


def _check_sim_bugs(opts: RunOptions) -> None:
    if not opts.sim_bugs:
        return
    if opts.target != "sim":
        raise OptionError(
            "--sim-bug injects bugs into the sim target only: add --target sim or leave it out"
        )
    known = sim_bugs()
    unknown = [b for b in opts.sim_bugs if b not in known]
    if unknown:
        raise OptionError(
            f"unknown sim bug {unknown[0]!r} for --sim-bug: choose from {', '.join(known)}"
        )


def sim_bugs() -> tuple[str, ...]:
    """The bugs the sim service can inject."""
    from clusters.sim.service import BUGS

    return tuple(BUGS)


def targets_help() -> str:
    """Each target's workloads, lock implementations and read modes, for ``--help``
    (imports every target module: only when help is printed)."""
    lines = []
    for name, spec in TARGETS.items():
        module, attr = spec.split(":")
        try:
            target: Any = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, HarnessError):
            continue
        locks = ", ".join(
            getattr(target, "lock_clients", None) or (["sim"] if name == "sim" else ["-"])
        )
        modes = ", ".join(getattr(target, "read_modes", ()) or ["-"])
        lines.append(f"{name}: locks {locks}; read modes {modes}")
    return "; ".join(lines)
