"""The power cut: server processes killed and what they had not fsynced discarded (the
node's data directory on the power-loss layer, ``clusters._powerfs``), restarted at the
stop on what the disk kept. A kill alone leaves the page cache: everything written
survives it, fsynced or not."""

from __future__ import annotations

from checkers.windows import KIND_EFFECTS, WORDS
from core.abilities import Ability
from core.faults import POWER_LOSS
from nemesis.node_faults import NodePowerLoss
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec, simple

FAULT = FaultSpec(
    kind=POWER_LOSS,
    help="cut nodes' power: kill -9 and discard what the server had not fsynced; "
    "restart at the stop",
    build=simple(NodePowerLoss),
    describe=WORDS[POWER_LOSS.name],
    effects=KIND_EFFECTS[POWER_LOSS.name],
    needs=frozenset({Ability.POWER_LOSS}),
    aim=AT_NODES,
)
