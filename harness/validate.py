"""Every check of a run's options before anything starts, in one place for the command
line and suite files alike.

``RunOptions.validate`` checks what the options say on their own (ranges, names, the
schedule, the op timeout); this adds what needs the registries: the target exists and can
honour the workload, lock, read mode and persistence (on SSH hosts too, none contacted);
the faults are registered ones (``nemesis.registry``) the target has the abilities for
(``core.abilities``); bugs to inject are the target's; ``--nemesis-target`` is a value
each fault takes. Errors are one line (``HarnessError``).
"""

from __future__ import annotations

from clusters import run_target
from clusters.registry import TARGETS, resolve
from clusters.spec import TargetSpec
from core.options import OptionError, RunOptions
from nemesis.registry import needs_of, parse_nemesis
from nemesis.targets import check_nemesis_target


def check_run(opts: RunOptions) -> TargetSpec:
    """The run's target (its name filled in when left to the default), or a one-line
    HarnessError for anything ``opts`` cannot run as asked."""
    opts.validate()
    parse_nemesis(opts.nemesis)
    check_nemesis_target(opts)
    target = resolve(opts.target)
    opts.target = target.name
    check_target(target, opts)
    _check_bugs(target, opts)
    return target


def check_target(target: TargetSpec, opts: RunOptions) -> None:
    """OptionError (one line) for options ``target`` cannot honour, a fault it has not
    the abilities for included (with the target's reason)."""
    run_target.check_options(target, opts)
    run_target.check_faults(target, opts, needs_of(opts.faults()))


def _check_bugs(target: TargetSpec, opts: RunOptions) -> None:
    if not opts.sim_bugs:
        return
    if not target.bugs:
        buggy = [name for name, t in TARGETS.items() if t.bugs]
        raise OptionError(
            f"--sim-bug injects bugs into the {', '.join(buggy)} target only: add "
            f"--target {buggy[0]} or leave it out"
        )
    unknown = [b for b in opts.sim_bugs if b not in target.bugs]
    if unknown:
        raise OptionError(
            f"unknown sim bug {unknown[0]!r} for --sim-bug: choose from {', '.join(target.bugs)}"
        )


def sim_bugs() -> tuple[str, ...]:
    """The bugs the targets can inject (``--sim-bug``)."""
    return tuple(dict.fromkeys(b for t in TARGETS.values() for b in t.bugs))


def targets_help() -> str:
    """Each target's lock implementations and read modes, for ``--help``."""
    return "; ".join(
        f"{name}: locks {', '.join(t.locks) or '-'}; read modes {', '.join(t.read_modes) or '-'}"
        for name, t in TARGETS.items()
    )


def targets_described() -> str:
    """Each target with its description and workloads, for ``--target``'s help."""
    return "; ".join(
        f"{name}: {t.description} (workloads {', '.join(t.workload_names)})"
        for name, t in TARGETS.items()
    )
