"""The etcd target's clients, one builder per workload and lock implementation.

Lock implementations (``--lock``): ``lease-lock`` (etcd's lock service) and ``recipe``
(the client-side recipe), see ``clusters.etcd.lock``. ``clusters.etcd.spec`` lists them.
"""

from __future__ import annotations

from clusters.etcd.discovery import EtcdDiscovery
from clusters.etcd.election import EtcdElection
from clusters.etcd.herd import EtcdHerd
from clusters.etcd.ids import EtcdCounter, EtcdRevision
from clusters.etcd.lock import RecipeLock, ServiceLock
from clusters.etcd.register import EtcdRegister
from clusters.etcd.version_cas import EtcdVersionCas
from clusters.etcd.watch import EtcdWatch
from workloads.common.factories import holder_clients, register_clients
from workloads.discovery import registry_clients
from workloads.election import ElectionClient
from workloads.guarded import guarded_clients
from workloads.herd import herd_clients
from workloads.ids.factories import id_clients, snowflake_clients
from workloads.lock import LockClient
from workloads.watch.factory import watch_clients

REGISTER = register_clients(EtcdRegister)
ELECTION = holder_clients(ElectionClient, EtcdElection, "election")
LEASE_LOCK = holder_clients(LockClient, ServiceLock)
RECIPE_LOCK = holder_clients(LockClient, RecipeLock)
COUNTER_IDS = id_clients(EtcdCounter)
REVISION_IDS = id_clients(EtcdRevision)
SNOWFLAKE_IDS = snowflake_clients(EtcdCounter)
REGISTRY = registry_clients(EtcdDiscovery)
VERSION_CAS = guarded_clients(EtcdVersionCas)
HERD = herd_clients(EtcdHerd)
WATCH = watch_clients(EtcdWatch)
