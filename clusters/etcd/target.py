"""The etcd target as a run sees it: its cluster, and a client per workload.

Lock implementations (``--lock``): ``lease-lock`` (default: etcd's lock service) and
``recipe`` (the client-side recipe), see ``clusters.etcd.lock``. Read modes
(``--read-mode``, cas-register): ``linearizable`` (default) and ``serializable``. Lease TTLs
are whole seconds on etcd, and at least 2 (etcd silently raises shorter ones to its
minimum, which would make the recorded TTL a lie), so other values are refused up front.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusters.docker_target import NO_GO_CLOCK, DockerTarget
from clusters.etcd.election import EtcdElection
from clusters.etcd.lock import RecipeLock, ServiceLock
from clusters.etcd.register import READ_MODES, EtcdRegister
from core.abilities import SERVER_ABILITIES, Ability
from core.options import RunOptions
from workloads.election import ElectionClient
from workloads.factories import check_lease_ttl, holder_clients, register_clients
from workloads.lock import LockClient

MIN_TTL = 2


@dataclass(frozen=True)
class EtcdTarget(DockerTarget):
    """A ``DockerTarget`` that also refuses lease TTLs etcd cannot grant as asked."""

    def check_options(self, opts: RunOptions) -> None:
        super().check_options(opts)
        check_lease_ttl(opts, self.name, MIN_TTL, whole=True)


TARGET = EtcdTarget(
    name="etcd",
    workload_clients={
        "cas-register": register_clients(EtcdRegister),
        "election": holder_clients(ElectionClient, EtcdElection, "election"),
    },
    lock_clients={
        "lease-lock": holder_clients(LockClient, ServiceLock),
        "recipe": holder_clients(LockClient, RecipeLock),
    },
    default_lock="lease-lock",
    read_modes=READ_MODES,
    abilities=SERVER_ABILITIES - {Ability.CLOCK},
    lacks=NO_GO_CLOCK,
)
