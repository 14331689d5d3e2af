"""The crash: server processes killed (kill -9), restarted at the stop (healthy again)."""

from __future__ import annotations

from checkers.windows import CRASHES, WORDS
from core.abilities import Ability
from core.faults import KILL
from nemesis.node_faults import NodeKill
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec, simple

FAULT = FaultSpec(
    kind=KILL,
    help="kill server processes (kill -9) and restart them at the stop",
    build=simple(NodeKill),
    describe=WORDS[KILL.name],
    effects=frozenset({CRASHES}),
    needs=frozenset({Ability.KILL}),
    aim=AT_NODES,
)
