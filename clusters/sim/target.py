"""The ``sim`` target as a run sees it: the built-in service, no Docker needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusters.sim.cluster import SimCluster
from clusters.sim.factories import (
    SimElectionClientFactory,
    SimLockClientFactory,
    SimRegisterClientFactory,
)
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import OptionError, RunOptions

ClientBuilder = Callable[[RunOptions, str, "str | None"], ClientFactory]
"""(options, the sim service's address, the protected resource's or None) -> clients."""


def _register_clients(opts: RunOptions, address: str, resource: str | None) -> ClientFactory:
    return SimRegisterClientFactory(address, timeout=opts.op_timeout)


def _holder_clients(factory: Any) -> ClientBuilder:
    """Lock or election clients: a lease kept alive, work, a fenced write to the resource."""

    def build(opts: RunOptions, address: str, resource: str | None) -> ClientFactory:
        assert resource is not None, f"the {opts.workload} workload needs the resource"
        return factory(
            address,
            resource,
            ttl=opts.lease_ttl,
            keepalive=opts.keepalive,
            work=opts.work_time,
            wait=opts.acquire_wait,
            timeout=min(opts.op_timeout, 5.0),
        )

    return build


CLIENTS: dict[str, ClientBuilder] = {
    "lock": _holder_clients(SimLockClientFactory),
    "cas-register": _register_clients,
    "election": _holder_clients(SimElectionClientFactory),
}
"""The sim target's client of each workload it offers."""


class SimTarget:
    """Leases, a fencing lock, CAS registers and elections in one local server process."""

    name = "sim"
    workloads = tuple(CLIENTS)
    lock_impls = ("sim",)

    def check_options(self, opts: RunOptions) -> None:
        if opts.workload not in CLIENTS:
            raise OptionError(
                f"the sim target has no {opts.workload} clients: choose from {', '.join(CLIENTS)}"
            )
        faults = {n for n in opts.nemesis if n != "none"} - {"client-pause", "pause", "kill"}
        if faults:
            raise OptionError(
                f"the sim target has one node on loopback: {', '.join(sorted(faults))} "
                "faults need a real cluster (--target etcd, zookeeper, consul, redis, redlock)"
            )
        if opts.lock not in (None, "sim"):
            raise OptionError(
                f"the sim target has one lock implementation, 'sim', not {opts.lock!r}"
            )

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> SimCluster:
        return SimCluster(clock, bugs=opts.sim_bugs, seed=opts.seed)

    def versions(self, cluster: Cluster) -> dict[str, str]:
        return {"sim": "built-in"}

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        return CLIENTS[opts.workload](opts, cluster.endpoints()["sim"], resource)


TARGET = SimTarget()
