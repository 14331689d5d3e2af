"""From ``--nemesis`` options to a nemesis, its schedule and its final healing ops.

Returns ``(nemesis, schedule, final)``: the composed nemesis (None when there is no
fault), the generator of fault starts and stops for the main phase (nemesis thread only),
and the generator that heals everything at the end of the main phase. Each fault is read
from its ``FaultSpec`` (``nemesis.fault_registry``). Faults that a cluster cannot take (no
partitions on one node, no clock on Go servers) are refused with one line before anything
starts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core import gen
from core.cluster import Cluster
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.base import Compose, Nemesis
from nemesis.fault_registry import rules_of, spec_of
from nemesis.spec import FaultSpec
from nemesis.targets import check_nodes, target_of


def _make(spec: FaultSpec, target: str, opts: RunOptions, cluster: Cluster, seed: int) -> Nemesis:
    try:
        return spec.build(cluster, target, seed, opts)
    except TypeError as e:
        raise OptionError(f"--nemesis {spec.name}: {e}") from None


def asked_durations(opts: RunOptions) -> dict[str, float]:
    """How long the run asks each of its faults to last, in seconds: its own timing (a
    client pause's ``--pause-for``), else one ``--nemesis-interval``. Recorded with the
    faults in test.json (``asked_s``): a window applied for less was cut short."""
    asked: dict[str, float] = {}
    for name in opts.fault_names():
        timing = spec_of(name).timing(opts)
        asked[name] = float(timing[1] if timing is not None else opts.faults.nemesis_interval)
    return asked


def build_nemesis(
    opts: RunOptions, cluster: Cluster, seed: int, start: float = 0.0
) -> tuple[Nemesis | None, Any, Any]:
    """``start``: run-clock seconds at which the workload starts; ``--pause-at`` counts
    from there, as does the first fault of a periodic schedule."""
    faults = opts.fault_names()
    if not faults:
        return None, None, None
    check_nodes(opts, cluster)  # the values were checked before the run (harness.validate)
    parts: list[Nemesis] = []
    schedules: list[Any] = []
    finals: list[Any] = []
    periodic = rules_of(opts).periodic
    for i, name in enumerate(faults):
        spec = spec_of(name)
        target = target_of(name, opts) or ""
        if spec.built_by not in faults:  # else that fault's nemesis handles this one too
            parts.append(_make(spec, target, opts, cluster, seed + i))
        start_op: dict[str, Any] = {"f": spec.start}
        value = spec.start_value(target, opts)
        if value is not None:
            start_op["value"] = value
        stop_op = {"f": spec.stop}
        timing = spec.timing(opts)
        if timing is not None:  # at a time of its own (a client pause at --pause-at)
            at, lasts = timing  # lasting from when it took effect, as a periodic one does
            once = gen.nemesis_schedule(lasts, start_op, stop_op, cycles=1)
            schedules.append(replace(once, next_time=gen.to_ns(start + at)))
        else:
            # Faults take turns: the i-th starts i/n of an interval later than the first,
            # which starts well inside the run (``RunOptions.first_fault_at``).
            # Anchored to the workload start in absolute run-clock time: a schedule that
            # anchored itself at the first op() would be re-anchored every time the runner
            # re-asks after an event, and never fire while clients keep completing.
            interval = opts.faults.nemesis_interval
            first = opts.first_fault_at() + interval * periodic.index(name) / len(periodic)
            schedules.append(
                replace(
                    gen.nemesis_schedule(opts.faults.nemesis_interval, start_op, stop_op),
                    next_time=gen.to_ns(start + first),
                    until=gen.to_ns(start + opts.time_limit),  # no start that cannot last
                )
            )
        finals.append(stop_op)
    schedule = gen.nemesis(gen.any_of(*schedules) if len(schedules) > 1 else schedules[0])
    final = gen.nemesis([gen.once(f) for f in finals])
    return Compose(parts), schedule, final
