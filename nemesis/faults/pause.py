"""The server pause: server processes frozen (SIGSTOP) and thawed, their network up."""

from __future__ import annotations

from checkers.windows import NODE_PAUSE, WORDS
from core.abilities import Ability
from core.cluster import Cluster
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.node_faults import NodePause
from nemesis.nodes import TARGETS
from nemesis.spec import FaultSpec


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    return NodePause(cluster, target, seed)


FAULT = FaultSpec(
    name=NODE_PAUSE,
    help="freeze server processes (SIGSTOP) and thaw them",
    build=_build,
    describe=WORDS[NODE_PAUSE],
    needs=frozenset({Ability.PAUSE}),
    targets=TARGETS,
    default="one",
    node_names=True,
)
