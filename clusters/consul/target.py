"""The Consul target as a run sees it: its cluster, and a client per workload.

Lock implementation (``--lock``): ``session`` (KV acquire with a TTL session,
``clusters.consul.lock``). Read modes (``--read-mode``, cas-register): ``default``
(default), ``consistent`` and ``stale``. Session TTLs from 1 s (the servers' configured
minimum, ``clusters.consul.server``) to 24 h. Consul is a Go program: no clock faults.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusters.consul.election import ConsulElection
from clusters.consul.lock import ConsulLock
from clusters.consul.register import READ_MODES, ConsulRegister
from clusters.consul.server import SESSION_TTL_MIN
from clusters.docker_target import DockerTarget
from core.options import RunOptions
from workloads.election import ElectionClient
from workloads.factories import check_lease_ttl, holder_clients, register_clients
from workloads.lock import LockClient

SESSION_TTL_MAX = 86400.0


@dataclass(frozen=True)
class ConsulTarget(DockerTarget):
    """A ``DockerTarget`` that also refuses session TTLs Consul would not grant."""

    def check_options(self, opts: RunOptions) -> None:
        super().check_options(opts)
        check_lease_ttl(opts, self.name, SESSION_TTL_MIN, SESSION_TTL_MAX)


TARGET = ConsulTarget(
    name="consul",
    workload_clients={
        "cas-register": register_clients(ConsulRegister),
        "election": holder_clients(ElectionClient, ConsulElection, "election"),
    },
    lock_clients={"session": holder_clients(LockClient, ConsulLock)},
    default_lock="session",
    read_modes=READ_MODES,
    clock_faults=False,
)
