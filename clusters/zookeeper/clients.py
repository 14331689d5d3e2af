"""The ZooKeeper target's clients, one builder per workload and lock implementation.

Lock implementation (``--lock``): ``recipe`` (``kazoo``'s lock on a session per holding,
``clusters.zookeeper.lock``). ``clusters.zookeeper.spec`` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import cast

from clusters.zookeeper.discovery import ZkDiscovery
from clusters.zookeeper.election import ZkElection
from clusters.zookeeper.herd import ZkHerd
from clusters.zookeeper.ids import ZkSequential
from clusters.zookeeper.lock import ZkLock
from clusters.zookeeper.register import ZkRegister
from clusters.zookeeper.served import Served, names_of
from clusters.zookeeper.watch import ZkWatch
from core.client import Client, ClientFactory, WorkerContext
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.factories import Connector, connector, holder_clients
from workloads.discovery import registry_clients
from workloads.election import ElectionClient
from workloads.herd import herd_clients
from workloads.ids.factories import id_clients, snowflake_clients
from workloads.lock import LockClient
from workloads.register import RegisterClient, RegisterOptions
from workloads.watch.factory import watch_clients


@dataclass(frozen=True, slots=True)
class ServedRegisterFactory:
    """CAS-register clients whose ZooKeeper sessions record which server answered each
    operation, its role and zxids (``clusters.zookeeper.served``); a read that fails in
    any way is a ``fail`` (``workloads.common.factories.RegisterFactory``)."""

    connector: Connector

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connector.for_slot(ctx.slot)
        driver = cast(Callable[..., ZkRegister], connect)  # a ZkRegister, which takes served=
        served = Served(ctx, names_of(dict(self.connector.endpoints)))
        return RegisterClient(ctx, partial(driver, served=served), node, definite_reads=True)


def register_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """The cas-register workload's clients (``ServedRegisterFactory``)."""
    return ServedRegisterFactory(
        connector(opts, cluster, ZkRegister, read_mode=opts.record(RegisterOptions).read_mode)
    )


REGISTER = register_clients
ELECTION = holder_clients(ElectionClient, ZkElection, "election")
RECIPE_LOCK = holder_clients(LockClient, ZkLock)
SEQUENTIAL_IDS = id_clients(ZkSequential)
SNOWFLAKE_IDS = snowflake_clients(ZkSequential)


def registry(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """The registry workload's clients, whose sessions name the server each connection is
    to (a session that moved is in the records: ``clusters.zookeeper.session``)."""
    names = names_of(dict(cluster.endpoints()))
    return registry_clients(partial(ZkDiscovery, names=names))(opts, cluster, resource)


REGISTRY = registry
HERD = herd_clients(ZkHerd)
WATCH = watch_clients(ZkWatch, one_shot=True)
