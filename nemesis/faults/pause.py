"""The server pause: server processes frozen (SIGSTOP) and thawed, their network up."""

from __future__ import annotations

from checkers.windows import CUTS_OFF, NODE_PAUSE, WORDS
from core.abilities import Ability
from nemesis.node_faults import NodePause
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec, simple

FAULT = FaultSpec(
    name=NODE_PAUSE,
    help="freeze server processes (SIGSTOP) and thaw them",
    build=simple(NodePause),
    describe=WORDS[NODE_PAUSE],
    effects=frozenset({CUTS_OFF}),
    needs=frozenset({Ability.PAUSE}),
    aim=AT_NODES,
)
