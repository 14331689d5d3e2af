"""Every check of a run's options before anything starts, in one place for the command
line and suite files alike.

``decide`` is the one place where the defaults that depend on the workload are decided
from its registry entry (``workloads.registry``): the fault of a run that names none and
the op timeout that follows the work of a holding workload. ``RunOptions.validate`` checks
what the options say on their own (ranges, names, the schedule, the op timeout); this adds
what needs the registries: the workload and the target exist and the target can honour the
workload, lock, read mode and persistence (on SSH hosts too, none contacted); the faults
are registered ones (``nemesis.registry``) the target has the abilities for
(``core.abilities``); bugs to inject are the target's; ``--nemesis-target`` is a value
each fault takes. Errors are one line (``HarnessError``).
"""

from __future__ import annotations

from dataclasses import replace

from clusters import run_target
from clusters.registry import TARGETS, resolve
from clusters.spec import TargetSpec
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.registry import needs_of, parse_nemesis, rules_of
from nemesis.targets import check_nemesis_target
from workloads.registry import get_workload


def decide(opts: RunOptions) -> RunOptions:
    """``opts`` with the defaults that depend on its workload and faults decided from
    their registry entries: the workload (the registry's default when none is named), its
    fault when none is named, the op timeout when it follows (a one-line OptionError for
    an unknown workload)."""
    workload = get_workload(opts.workload)
    named = opts.with_(
        workload=workload.name, nemesis=opts.faults.nemesis or (workload.default_fault,)
    )
    return named.follow_op_timeout(workload.holds, rules_of(named))


def check_options(opts: RunOptions) -> RunOptions:
    """The options on their own: the workload's defaults decided, then
    ``RunOptions.validate`` with its facts and its faults' rules (one-line OptionError);
    returns the decided options."""
    opts = decide(opts)
    workload = get_workload(opts.workload)
    opts.validate(workload.holds, rules_of(opts))
    workload.check(opts)
    return opts


def check_run(opts: RunOptions) -> tuple[RunOptions, TargetSpec]:
    """The options to run (the workload's defaults decided, the target's name filled in
    when left to the default) and their target, or a one-line HarnessError for anything
    ``opts`` cannot run as asked."""
    opts = check_options(opts)
    parse_nemesis(opts.faults.nemesis)
    check_nemesis_target(opts)
    target = resolve(opts.target)
    opts = target.decide(replace(opts, target=target.name))
    check_target(target, opts)
    _check_bugs(target, opts)
    return opts, target


def check_target(target: TargetSpec, opts: RunOptions) -> None:
    """OptionError (one line) for options ``target`` cannot honour, a fault it has not
    the abilities for included (with the target's reason)."""
    run_target.check_options(target, opts)
    run_target.check_faults(target, opts, needs_of(opts.fault_names()))


def _check_bugs(target: TargetSpec, opts: RunOptions) -> None:
    if not opts.backend.sim_bugs:
        return
    if not target.bugs:
        buggy = [name for name, t in TARGETS.items() if t.bugs]
        raise OptionError(
            f"--sim-bug injects bugs into the {', '.join(buggy)} target only: add "
            f"--target {buggy[0]} or leave it out"
        )
    unknown = [b for b in opts.backend.sim_bugs if b not in target.bugs]
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
