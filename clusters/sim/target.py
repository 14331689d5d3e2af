"""The ``sim`` target as a run sees it: the built-in service, no Docker needed."""

from __future__ import annotations

from clusters.sim.cluster import SimCluster
from clusters.sim.factories import (
    SimElectionClientFactory,
    SimLockClientFactory,
    SimRegisterClientFactory,
)
from core.abilities import Ability
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import OptionError, RunOptions

ONE_NODE = (
    "the sim target has one node on loopback: {fault} faults need a real cluster "
    "(--target etcd, zookeeper, consul, redis, redlock)"
)


class SimTarget:
    """Leases, a fencing lock, CAS registers and elections in one local server process."""

    name = "sim"
    workloads = ("lock", "cas-register", "election")
    lock_impls = ("sim",)
    abilities = frozenset({Ability.KILL, Ability.PAUSE})
    lacks = dict.fromkeys((Ability.NETWORK, Ability.LOSE_PACKETS, Ability.CLOCK), ONE_NODE)

    def check_options(self, opts: RunOptions) -> None:
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
        address = cluster.endpoints()["sim"]
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


TARGET = SimTarget()
