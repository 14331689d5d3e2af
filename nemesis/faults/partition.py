"""The network partition: links between servers cut by a topology (``nemesis.topology``)."""

from __future__ import annotations

from typing import Any

from checkers.windows import CUTS_OFF, WORDS
from core.abilities import Ability
from core.faults import PARTITION
from core.options import RunOptions
from nemesis.partition import Partition
from nemesis.spec import Aim, FaultSpec, simple
from nemesis.topology import TOPOLOGIES


def _topology(target: str, opts: RunOptions) -> dict[str, Any]:
    return {"topology": target}


FAULT = FaultSpec(
    kind=PARTITION,
    help="cut the network between servers (iptables), by a topology",
    build=simple(Partition),  # loss rides on it too (``nemesis.faults.loss``)
    describe=WORDS[PARTITION.name],
    effects=frozenset({CUTS_OFF}),
    needs=frozenset({Ability.NETWORK}),
    start_value=_topology,
    aim=Aim(TOPOLOGIES, "one", node_names=True),
)
