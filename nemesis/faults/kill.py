"""The crash: server processes killed (kill -9), restarted at the stop (healthy again)."""

from __future__ import annotations

from checkers.windows import KILL, WORDS
from core.abilities import Ability
from core.cluster import Cluster
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.node_faults import NodeKill
from nemesis.nodes import TARGETS
from nemesis.spec import FaultSpec


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    return NodeKill(cluster, target, seed)


FAULT = FaultSpec(
    name=KILL,
    help="kill server processes (kill -9) and restart them at the stop",
    build=_build,
    describe=WORDS[KILL],
    needs=frozenset({Ability.KILL}),
    targets=TARGETS,
    default="one",
    node_names=True,
)
