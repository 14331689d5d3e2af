"""The Consul target's clients, one builder per workload and lock implementation.

Lock implementation (``--lock``): ``session`` (KV acquire with a TTL session,
``clusters.consul.lock``). ``clusters.consul.spec`` lists them.
"""

from __future__ import annotations

from clusters.consul.discovery import ConsulDiscovery
from clusters.consul.election import ConsulElection
from clusters.consul.herd import ConsulHerd
from clusters.consul.lock import ConsulLock
from clusters.consul.register import ConsulRegister
from clusters.consul.watch import ConsulWatch
from workloads.common.factories import holder_clients, register_clients
from workloads.discovery import registry_clients
from workloads.election import ElectionClient
from workloads.herd import herd_clients
from workloads.lock import LockClient
from workloads.watch.factory import watch_clients

REGISTER = register_clients(ConsulRegister)
ELECTION = holder_clients(ElectionClient, ConsulElection, "election")
SESSION_LOCK = holder_clients(LockClient, ConsulLock)
REGISTRY = registry_clients(ConsulDiscovery)
HERD = herd_clients(ConsulHerd)
WATCH = watch_clients(ConsulWatch)
