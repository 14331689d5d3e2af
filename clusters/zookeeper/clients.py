"""The ZooKeeper target's clients, one builder per workload and lock implementation.

Lock implementation (``--lock``): ``recipe`` (``kazoo``'s lock on a session per holding,
``clusters.zookeeper.lock``). ``clusters.zookeeper.spec`` lists them.
"""

from __future__ import annotations

from clusters.zookeeper.discovery import ZkDiscovery
from clusters.zookeeper.election import ZkElection
from clusters.zookeeper.herd import ZkHerd
from clusters.zookeeper.ids import ZkSequential
from clusters.zookeeper.lock import ZkLock
from clusters.zookeeper.register import ZkRegister
from clusters.zookeeper.watch import ZkWatch
from workloads.discovery import registry_clients
from workloads.election import ElectionClient
from workloads.factories import holder_clients, register_clients
from workloads.herd import herd_clients
from workloads.id_factories import id_clients, snowflake_clients
from workloads.lock import LockClient
from workloads.watch_factory import watch_clients

REGISTER = register_clients(ZkRegister)
ELECTION = holder_clients(ElectionClient, ZkElection, "election")
RECIPE_LOCK = holder_clients(LockClient, ZkLock)
SEQUENTIAL_IDS = id_clients(ZkSequential)
SNOWFLAKE_IDS = snowflake_clients(ZkSequential)
REGISTRY = registry_clients(ZkDiscovery)
HERD = herd_clients(ZkHerd)
WATCH = watch_clients(ZkWatch, one_shot=True)
