"""From ``--nemesis`` options to a nemesis, its schedule and its final healing ops.

Returns ``(nemesis, schedule, final)``: the composed nemesis (None when there is no
fault), the generator of fault starts and stops for the main phase (nemesis thread only),
and the generator that heals everything at the end of the main phase. Faults that a
cluster cannot take (no partitions on one node, no clock on Go servers) are refused with
one line before anything starts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core import gen
from core.cluster import Cluster
from core.options import OptionError, RunOptions
from nemesis import client_pause
from nemesis.base import Compose, Nemesis
from nemesis.host_clock import clock_nemesis
from nemesis.node_faults import NodeKill, NodePause
from nemesis.partition import Partition
from nemesis.targets import check_nemesis_target, check_nodes, target_of

# fault name -> (start op, stop op)
OPS: dict[str, tuple[str, str]] = {
    "client-pause": (client_pause.START, client_pause.STOP),
    "pause": ("start-pause", "stop-pause"),
    "kill": ("start-kill", "stop-kill"),
    "partition": ("start-partition", "stop-partition"),
    "loss": ("start-loss", "stop-loss"),
    "clock": ("start-clock", "stop-clock"),
}


def _target(name: str, opts: RunOptions) -> str:
    """What fault ``name`` aims at: ``--nemesis-target``, else the fault's default."""
    return target_of(name, opts) or ""


def _make(name: str, opts: RunOptions, cluster: Cluster, seed: int) -> Nemesis:
    target = _target(name, opts)
    try:
        if name == "client-pause":
            return client_pause.ClientPause(seed, settle=opts.work_time / 2)
        if name == "pause":
            return NodePause(cluster, target, seed)
        if name == "kill":
            return NodeKill(cluster, target, seed)
        if name in ("partition", "loss"):
            return Partition(cluster, target, seed)
        if name == "clock":
            return clock_nemesis(cluster, target, seed)
    except TypeError as e:
        raise OptionError(f"--nemesis {name}: {e}") from None
    raise OptionError(f"unknown fault {name!r}")


def _start_value(name: str, opts: RunOptions) -> dict[str, Any] | None:
    """The start op's value; ``extra.clock_delta`` fixes the clock jump (seconds, signed),
    otherwise each jump is random."""
    target = _target(name, opts)
    if name == "partition":
        return {"topology": target}
    if name in ("loss",):
        return None
    if name == "clock" and "clock_delta" in opts.extra:
        return {"target": target, "delta": float(opts.extra["clock_delta"])}
    return {"target": target}


def build_nemesis(
    opts: RunOptions, cluster: Cluster, seed: int, start: float = 0.0
) -> tuple[Nemesis | None, Any, Any]:
    """``start``: run-clock seconds at which the workload starts; ``--pause-at`` counts
    from there, as does the first fault of a periodic schedule."""
    faults = opts.faults()
    if not faults:
        return None, None, None
    check_nemesis_target(opts)
    check_nodes(opts, cluster)
    parts: list[Nemesis] = []
    schedules: list[Any] = []
    finals: list[Any] = []
    shared = "loss" in faults and "partition" in faults
    for i, name in enumerate(faults):
        start_f, stop_f = OPS[name]
        if not (name == "loss" and shared):
            parts.append(_make(name, opts, cluster, seed + i))
        start_op: dict[str, Any] = {"f": start_f}
        value = _start_value(name, opts)
        if value is not None:
            start_op["value"] = value
        stop_op = {"f": stop_f}
        if name == "client-pause" and opts.pause_at is not None:
            schedules.append(
                [
                    gen.at(start + opts.pause_at, start_op),
                    gen.at(start + opts.pause_at + opts.pause_for, stop_op),
                ]
            )
        else:
            # Faults take turns: the i-th starts i/n of an interval later than the first,
            # which starts well inside the run (``RunOptions.first_fault_at``).
            # Anchored to the workload start in absolute run-clock time: a schedule that
            # anchored itself at the first op() would be re-anchored every time the runner
            # re-asks after an event, and never fire while clients keep completing.
            periodic = opts.periodic_faults()
            first = opts.first_fault_at() + opts.nemesis_interval * periodic.index(name) / len(
                periodic
            )
            schedules.append(
                replace(
                    gen.nemesis_schedule(opts.nemesis_interval, start_op, stop_op),
                    next_time=gen.to_ns(start + first),
                )
            )
        finals.append(stop_op)
    schedule = gen.nemesis(gen.any_of(*schedules) if len(schedules) > 1 else schedules[0])
    final = gen.nemesis([gen.once(f) for f in finals])
    return Compose(parts), schedule, final
