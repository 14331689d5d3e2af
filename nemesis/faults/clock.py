"""The clock fault: servers' clocks bumped or strobed (libfaketime in containers, the
hosts' real clocks over SSH), every change measured back from the node."""

from __future__ import annotations

from typing import Any

from checkers.windows import MOVES_CLOCK, WORDS
from core.abilities import Ability
from core.cluster import Cluster
from core.faults import CLOCK
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    from nemesis.host_skew import clock_nemesis  # the Docker half needs the Docker SDK

    return clock_nemesis(cluster, target, seed)


def _jump(target: str, opts: RunOptions) -> dict[str, Any]:
    """``clock_delta`` fixes the jump (seconds, signed); otherwise each is random."""
    if opts.faults.clock_delta is not None:
        return {"target": target, "delta": opts.faults.clock_delta}
    return {"target": target}


FAULT = FaultSpec(
    kind=CLOCK,
    help="move servers' clocks (libfaketime; the hosts' own clocks with --ssh)",
    build=_build,
    describe=WORDS[CLOCK.name],
    effects=frozenset({MOVES_CLOCK}),
    needs=frozenset({Ability.CLOCK}),
    start_value=_jump,
    aim=AT_NODES,
)
