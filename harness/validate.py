"""Every check of a run's options before anything starts, in one place for the command
line and suite files alike.

``RunOptions.validate`` checks what the options say on their own (ranges, names, the
schedule, the op timeout); this adds what needs the registries: the target exists and can
honour the workload, lock, read mode and persistence; the faults are registered ones
(``nemesis.registry``) that the target has the abilities for (``core.abilities``); sim
bugs are known ones; ``--nemesis-target`` is a value each fault takes. Errors are one line
(``HarnessError``).
"""

from __future__ import annotations

import importlib
from typing import Any

from core.abilities import check_abilities
from core.errors import HarnessError
from core.options import OptionError, RunOptions
from harness.targets import TARGETS, Target, resolve_target
from nemesis.registry import needs_of, parse_nemesis
from nemesis.targets import check_nemesis_target


def check_run(opts: RunOptions) -> None:
    """Raise a one-line HarnessError for anything ``opts`` cannot run as asked."""
    opts.validate()
    parse_nemesis(opts.nemesis)
    check_nemesis_target(opts)
    target = resolve_target(opts.target)
    if not opts.ssh:  # an SSH run wraps the target and checks itself when it starts
        check_target(target, opts)
    _check_sim_bugs(opts)
    if opts.read_mode is not None and not getattr(target, "read_modes", ()):
        raise OptionError(f"{opts.target} has no read modes: leave out --read-mode")
    if opts.persistence is not None:
        from clusters.registry import TARGETS as CLUSTERS

        spec = CLUSTERS.get(opts.target)
        if spec is None:
            raise OptionError(f"{opts.target} has no persistence option: leave out --persistence")
        spec.check_persistence(opts.persistence)


def check_target(target: Target, opts: RunOptions) -> None:
    """OptionError (one line) for options ``target`` cannot honour, faults it has not the
    abilities for included (with the target's reason)."""
    target.check_options(opts)
    check_abilities(target, needs_of(opts.faults()))


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
