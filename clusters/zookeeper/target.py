"""The ZooKeeper target as a run sees it: its cluster, and a client per workload.

Lock implementation (``--lock``): ``recipe`` (``kazoo``'s lock on a session per holding,
``clusters.zookeeper.lock``). Read modes (``--read-mode``, cas-register): ``plain``
(default) and ``sync``. The lease TTL is the session timeout; the ensemble grants 1-60 s.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusters.docker_target import DockerTarget
from clusters.zookeeper.election import ZkElection
from clusters.zookeeper.lock import ZkLock
from clusters.zookeeper.register import READ_MODES, ZkRegister
from clusters.zookeeper.server import MAX_SESSION_MS, MIN_SESSION_MS
from core.options import RunOptions
from workloads.election import ElectionClient
from workloads.factories import check_lease_ttl, holder_clients, register_clients
from workloads.lock import LockClient


@dataclass(frozen=True)
class ZookeeperTarget(DockerTarget):
    """A ``DockerTarget`` that also refuses session timeouts the ensemble would change."""

    def check_options(self, opts: RunOptions) -> None:
        super().check_options(opts)
        check_lease_ttl(opts, self.name, MIN_SESSION_MS / 1000, MAX_SESSION_MS / 1000)


TARGET = ZookeeperTarget(
    name="zookeeper",
    workload_clients={
        "cas-register": register_clients(ZkRegister),
        "election": holder_clients(ElectionClient, ZkElection, "election"),
    },
    lock_clients={"recipe": holder_clients(LockClient, ZkLock)},
    default_lock="recipe",
    read_modes=READ_MODES,
)
