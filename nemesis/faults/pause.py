"""The server pause: server processes frozen (SIGSTOP) and thawed, their network up."""

from __future__ import annotations

from checkers.windows import CUTS_OFF, WORDS
from core.abilities import Ability
from core.faults import NODE_PAUSE
from nemesis.node_faults import NodePause
from nemesis.nodes import AT_NODES
from nemesis.spec import FaultSpec, simple

FAULT = FaultSpec(
    kind=NODE_PAUSE,
    help="freeze server processes (SIGSTOP) and thaw them",
    build=simple(NodePause),
    describe=WORDS[NODE_PAUSE.name],
    effects=frozenset({CUTS_OFF}),
    needs=frozenset({Ability.PAUSE}),
    aim=AT_NODES,
)
