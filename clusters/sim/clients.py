"""The ``sim`` target's clients and cluster: the built-in service, no Docker needed."""

from __future__ import annotations

from clusters.sim.cluster import NODE, SimCluster
from clusters.sim.factories import (
    SimElectionClientFactory,
    SimLockClientFactory,
    SimRegisterClientFactory,
)
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import RunOptions


def make_cluster(opts: RunOptions, clock: RunClock) -> SimCluster:
    """One local server process, with the run's ``--sim-bug`` bugs."""
    return SimCluster(clock, bugs=opts.sim_bugs, seed=opts.seed)


def client_factory(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """The clients of ``opts.workload`` on the sim service."""
    address = cluster.endpoints()[NODE]
    if opts.workload == "cas-register":
        return SimRegisterClientFactory(address, timeout=opts.op_timeout)
    assert resource is not None, "lock and election workloads need the resource"
    kwargs = dict(
        ttl=opts.lease_ttl,
        keepalive=opts.keepalive,
        work=opts.work_time,
        wait=opts.acquire_wait,
        timeout=min(opts.op_timeout, 5.0),
    )
    if opts.workload == "election":
        return SimElectionClientFactory(address, resource, **kwargs)  # type: ignore[arg-type]
    return SimLockClientFactory(address, resource, **kwargs)  # type: ignore[arg-type]
