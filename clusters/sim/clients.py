"""The ``sim`` target's clients and cluster: the built-in service, no Docker needed.

One client builder per workload (``clusters/sim/spec.py`` maps the workloads to them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusters.sim.client import SimClient
from clusters.sim.cluster import NODE, SimCluster
from clusters.sim.factories import (
    SimElectionClientFactory,
    SimGuardedClientFactory,
    SimLockClientFactory,
    SimRegisterClientFactory,
    SimWatchClientFactory,
)
from clusters.sim.herd import SimHerd
from clusters.spec import ClientBuilder
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import RunOptions
from workloads.discovery import DiscoveryOptions
from workloads.herd import herd_clients
from workloads.ids import CasCounter
from workloads.ids.factories import id_clients, snowflake_clients
from workloads.register import RegisterOptions


def make_cluster(opts: RunOptions, clock: RunClock) -> SimCluster:
    """One local server process, with the run's ``--sim-bug`` bugs."""
    return SimCluster(clock, bugs=opts.backend.sim_bugs, seed=opts.seed)


def register_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """CAS-register clients on the sim service."""
    return SimRegisterClientFactory(cluster.endpoints()[NODE], timeout=opts.op_timeout)


def version_cas_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """version-cas clients on the sim's CAS registers."""
    return SimGuardedClientFactory(cluster.endpoints()[NODE], opts.lock.work_time, keys=False)


def unique_key_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """unique-key clients on the sim's CAS registers."""
    return SimGuardedClientFactory(cluster.endpoints()[NODE], opts.lock.work_time, keys=True)


def watch_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """Watch workload clients on the sim service (its ``kv_*`` watch primitive)."""
    return SimWatchClientFactory(
        cluster.endpoints()[NODE],
        opts.record(RegisterOptions).keys,
        timeout=min(opts.op_timeout, 5.0),
    )


def _holder_clients(factory: Any) -> ClientBuilder:
    """Lock or election clients: a lease kept alive, work, a fenced write to the resource."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        assert resource is not None, f"the {opts.workload} workload needs the resource"
        return factory(
            cluster.endpoints()[NODE],
            resource,
            ttl=opts.lock.lease_ttl,
            keepalive=opts.lock.keepalive,
            work=opts.lock.work_time,
            wait=opts.lock.acquire_wait,
            timeout=min(opts.op_timeout, 5.0),
            check=opts.lock.holder_check,
        )

    return build


def registry_clients(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """Registry instances and discovery clients on the sim service."""
    from clusters.sim.discovery import SimRegistry
    from workloads.common.factories import Connector
    from workloads.discovery import RegistryFactory

    timeout = min(opts.op_timeout, 5.0)
    connector = Connector.of({NODE: cluster.endpoints()[NODE]}, SimRegistry, timeout=timeout)
    return RegistryFactory(
        connector, opts.record(DiscoveryOptions).instances, opts.lock.lease_ttl, opts.lock.keepalive
    )


LOCK = _holder_clients(SimLockClientFactory)
ELECTION = _holder_clients(SimElectionClientFactory)


def sim_counter(addresses: Sequence[str], *, timeout: float, prefix: str) -> CasCounter:
    """The sim service's counter: a register's compare-and-set loop (``CasCounter``)."""
    return CasCounter(SimClient(addresses[0], timeout), key=f"{prefix}/ids")


COUNTER_IDS = id_clients(sim_counter)
SNOWFLAKE_IDS = snowflake_clients(sim_counter)
HERD = herd_clients(SimHerd)
