"""From ``--nemesis`` options to a nemesis, its schedule and its final healing ops.

Returns ``(nemesis, schedule, final)``: the composed nemesis (None when there is no
fault), the generator of fault starts and stops for the main phase (nemesis thread only),
and the generator that heals everything at the end of the main phase.
"""

from __future__ import annotations

from typing import Any

from clusters.base import Cluster
from harness import gen
from harness.options import OptionError, RunOptions
from nemesis import client_pause
from nemesis.base import Compose, Nemesis


def build_nemesis(
    opts: RunOptions, cluster: Cluster, seed: int, start: float = 0.0
) -> tuple[Nemesis | None, Any, Any]:
    """``start``: run-clock seconds at which the workload starts; ``--pause-at`` counts
    from there."""
    faults = [n for n in opts.nemesis if n != "none"]
    if not faults:
        return None, None, None
    parts: list[Nemesis] = []
    schedules: list[Any] = []
    finals: list[Any] = []
    for name in faults:
        if name == "client-pause":
            parts.append(client_pause.ClientPause(seed))
            start_op = {"f": client_pause.START, "value": {"target": "holder"}}
            stop = {"f": client_pause.STOP}
            if opts.pause_at is not None:
                schedules.append([gen.at(start + opts.pause_at, start_op),
                                  gen.at(start + opts.pause_at + opts.pause_for, stop)])
            else:
                schedules.append(gen.nemesis_schedule(opts.nemesis_interval, start_op, stop))
            finals.append(stop)
        else:
            raise OptionError(
                f"the {name!r} fault is not available on target {opts.target!r} yet; "
                "use --nemesis client-pause or none"
            )
    schedule = gen.nemesis(gen.any_of(*schedules) if len(schedules) > 1 else schedules[0])
    final = gen.nemesis([gen.once(f) for f in finals])
    return Compose(parts), schedule, final
