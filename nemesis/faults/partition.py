"""The network partition: links between servers cut by a topology (``nemesis.topology``)."""

from __future__ import annotations

from typing import Any

from checkers.windows import PARTITION, WORDS
from core.abilities import Ability
from core.cluster import Cluster
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.partition import Partition
from nemesis.spec import FaultSpec
from nemesis.topology import TOPOLOGIES


def build_partition(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    """The iptables nemesis, which handles packet loss too (``nemesis.faults.loss``)."""
    return Partition(cluster, target, seed)


def _topology(target: str, opts: RunOptions) -> dict[str, Any]:
    return {"topology": target}


FAULT = FaultSpec(
    name=PARTITION,
    help="cut the network between servers (iptables), by a topology",
    build=build_partition,
    describe=WORDS[PARTITION],
    needs=frozenset({Ability.NETWORK}),
    start_value=_topology,
    targets=TOPOLOGIES,
    default="one",
    node_names=True,
)
