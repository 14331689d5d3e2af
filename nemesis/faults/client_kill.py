"""The client kill: a client's worker process killed (SIGKILL), a crashed service
instance; the runner starts a fresh process on its thread at its next operation."""

from __future__ import annotations

from checkers.windows import KILLS_CLIENT
from core.cluster import Cluster
from core.faults import CLIENT_KILL
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.client_kill import ClientKill
from nemesis.spec import Aim, FaultSpec
from workloads.common.lock_options import LockOptions


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    return ClientKill(seed, settle=opts.record(LockOptions).work_time / 2)


FAULT = FaultSpec(
    kind=CLIENT_KILL,
    help="kill a client process (SIGKILL, a crashed instance); the runner starts another",
    build=_build,
    describe="client process {processes} killed (SIGKILL) {when}",
    effects=frozenset({KILLS_CLIENT}),
    aim=Aim(("holder", "all"), "holder"),
)
