"""Packet loss: a share of the packets between all servers dropped (iptables' statistic
match), by the partition's nemesis."""

from __future__ import annotations

from typing import Any

from core.abilities import Ability
from core.faults import LOSS
from core.options import RunOptions
from nemesis.faults.partition import FAULT as PARTITION
from nemesis.spec import FaultSpec


def _no_value(target: str, opts: RunOptions) -> dict[str, Any] | None:
    return None  # every link, the nemesis' own share of packets


FAULT = FaultSpec(
    kind=LOSS,
    help="drop a share of the packets between servers (iptables)",
    build=PARTITION.build,
    describe="packet loss between the nodes {when}",
    needs=frozenset({Ability.LOSE_PACKETS}),
    start_value=_no_value,
    built_by=PARTITION.name,
)
