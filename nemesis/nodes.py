"""What the node faults need of a cluster, and which nodes a fault hits.

``NodeControl`` is the narrow view the partition and clock nemeses use: run a command in a
node (in its network namespace, as root) and know its address. The Docker clusters
provide it; real hosts over SSH will too. ``pick_nodes`` turns a target spec (one, leader,
minority, majority, all, or a node name) into nodes: a pure function.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from clusters.base import Cluster, HasLeader

TARGETS = ("one", "leader", "minority", "majority", "all")


@runtime_checkable
class NodeControl(Protocol):
    """Runs commands in a node and knows its address."""

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]: ...

    def ip(self, node: str) -> str: ...


def pick_nodes(
    spec: str, nodes: Sequence[str], rng: random.Random, leader: str | None = None
) -> list[str]:
    """The nodes a fault targets. ``leader`` falls back to a random node when unknown;
    ``minority`` is floor((n-1)/2) random nodes (at least one), ``majority`` n//2+1."""
    pool = list(nodes)
    if not pool:
        return []
    if spec in pool:
        return [spec]
    if spec == "all":
        return pool
    if spec == "leader":
        return [leader if leader is not None and leader in pool else rng.choice(pool)]
    rng.shuffle(pool)
    if spec == "one":
        return pool[:1]
    if spec == "minority":
        return sorted(pool[: max(1, (len(pool) - 1) // 2)])
    if spec == "majority":
        return sorted(pool[: len(pool) // 2 + 1])
    raise ValueError(f"unknown fault target {spec!r}: choose one of {', '.join(TARGETS)} or a "
                     f"node name ({', '.join(nodes)})")


def leader_of(cluster: Cluster) -> str | None:
    """The cluster's leader when it has one and says which, else None."""
    if isinstance(cluster, HasLeader):
        try:
            return cluster.leader()
        except Exception:
            return None
    return None
