"""What the node faults need of a cluster, and which nodes a fault hits.

``NodeControl`` is the narrow view the partition and clock nemeses use: run a command in a
node (in its network namespace, as root) and know its address. The Docker clusters
provide it; real hosts over SSH do too. ``pick_nodes`` turns a target spec (one, leader,
holder, minority, majority, all, or node names ``n1,n3``) into nodes: a pure function.
``aim`` resolves a spec against a live run: the leader from the cluster, the holder from
the run (the node the current lock holder's client talks to).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Final, Protocol, runtime_checkable

from core.cluster import Cluster, HasLeader
from nemesis.base import RunView
from nemesis.spec import Aim
from nemesis.topology import NO_HOLDER

TARGETS = ("one", "leader", "holder", "minority", "majority", "all")
AT_NODES: Final = Aim(TARGETS, "one", node_names=True)
"""The aim of a fault of server nodes (``pick_nodes``)."""
HOLDER_WAIT_S = 5.0
"""How long a fault aimed at the holder waits for one when nobody holds (between two
holdings) before it fails: lock cycles are short, and a fault that hits another node
would be a lie. A holder there is is taken at once."""


@runtime_checkable
class NodeControl(Protocol):
    """Runs commands in a node and knows its address."""

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]: ...

    def ip(self, node: str) -> str: ...


def node_names(spec: str) -> list[str]:
    """The node names of a spec that lists them (``n2``, ``n1,n3``)."""
    return [x.strip() for x in spec.split(",") if x.strip()]


def pick_nodes(
    spec: str,
    nodes: Sequence[str],
    rng: random.Random,
    leader: str | None = None,
    holder: str | None = None,
) -> list[str]:
    """The nodes a fault targets. ``leader`` falls back to a random node when unknown;
    ``holder`` (the node of the current lock holder) never does: ValueError when unknown;
    ``minority`` is floor((n-1)/2) random nodes (at least one), ``majority`` n//2+1; node
    names must all be nodes of the cluster (ValueError otherwise)."""
    pool = list(nodes)
    if not pool:
        return []
    if spec == "all":
        return pool
    if spec == "leader":
        return [leader if leader is not None and leader in pool else rng.choice(pool)]
    if spec == "holder":
        if holder is None or holder not in pool:
            raise ValueError(NO_HOLDER)
        return [holder]
    if spec in ("one", "minority", "majority"):
        rng.shuffle(pool)
        if spec == "one":
            return pool[:1]
        if spec == "minority":
            return sorted(pool[: max(1, (len(pool) - 1) // 2)])
        return sorted(pool[: len(pool) // 2 + 1])
    named = node_names(spec)
    unknown = [n for n in named if n not in pool]
    if not named or unknown:
        raise ValueError(
            f"unknown fault target {spec!r}: choose one of {', '.join(TARGETS)} "
            f"or node names ({', '.join(nodes)})"
        )
    return named


def leader_of(cluster: Cluster) -> str | None:
    """The cluster's leader when it has one and says which, else None."""
    if isinstance(cluster, HasLeader):
        try:
            return cluster.leader()
        except Exception:
            return None
    return None


def holder_node(view: RunView | None, wait: float | None = None) -> str | None:
    """The node the current holder (``workloads.holders``: the lock holder, the leader,
    the registered instance, the writer) talks to, the most recent holder's first, taken
    at once: a fault's window counts from when it takes effect, and no workload's holder
    owes the fault an event. Only when nobody holding has a known node does it wait for
    one, up to ``wait`` seconds (default ``HOLDER_WAIT_S``, read at call time); None when
    none came."""
    if view is None:
        return None
    deadline = time.monotonic() + (HOLDER_WAIT_S if wait is None else wait)
    while True:
        for process in view.holders():
            node = view.node_of(process)
            if node is not None:
                return node
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def aim(spec: str, cluster: Cluster, rng: random.Random, view: RunView | None) -> list[str]:
    """``pick_nodes`` on a live run: the leader asked of the cluster, the holder of the
    run (only when the spec needs them). ValueError when the spec hits no node."""
    leader = leader_of(cluster) if spec == "leader" else None
    holder = holder_node(view) if spec == "holder" else None
    return pick_nodes(spec, cluster.nodes(), rng, leader, holder)
