"""The crash: server processes killed (kill -9), restarted at the stop (healthy again)."""

from __future__ import annotations

from checkers.windows import CRASHES, KILL, WORDS
from core.abilities import Ability
from nemesis.node_faults import NodeKill
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec, simple

FAULT = FaultSpec(
    name=KILL,
    help="kill server processes (kill -9) and restart them at the stop",
    build=simple(NodeKill),
    describe=WORDS[KILL],
    effects=frozenset({CRASHES}),
    needs=frozenset({Ability.KILL}),
    aim=AT_NODES,
)
