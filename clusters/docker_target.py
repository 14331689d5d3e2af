"""Docker targets as a run sees them: cluster from the registry, clients per workload.

Each ``clusters/<target>/target.py`` builds one ``DockerTarget`` with its client builders
(one per workload, and one per lock implementation for the lock workload). The cluster
comes from ``clusters.registry``; this class adds what a run needs around it: refusing
options the target cannot honour (one line, before anything starts), versions, and the
client factory of the chosen workload.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from clusters.registry import TARGETS, ClusterOptions
from core.abilities import SERVER_ABILITIES, Ability
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import OptionError, RunOptions

# (options, cluster, resource address or None) -> a picklable client factory
ClientBuilder = Callable[[RunOptions, Cluster, "str | None"], ClientFactory]

GO_CLOCK = (
    "{target} is a Go program that reads the clock without libc, so libfaketime cannot move "
    "its clock inside a container; clock faults on {target} need real hosts (--ssh)"
)
NO_GO_CLOCK: Final = {Ability.CLOCK: GO_CLOCK}
"""What a Go server lacks in a container, and why."""


@dataclass(frozen=True)
class DockerTarget:
    """A target whose cluster runs in Docker containers."""

    name: str
    workload_clients: Mapping[str, ClientBuilder]
    lock_clients: Mapping[str, ClientBuilder] = field(default_factory=dict)
    default_lock: str | None = None
    read_modes: tuple[str, ...] = ()
    abilities: frozenset[Ability] = SERVER_ABILITIES
    """What faults may do to its cluster (``core.abilities``)."""
    lacks: Mapping[Ability, str] = field(default_factory=dict)
    """Why it lacks an ability (a line with ``{target}`` and ``{fault}``), said when a
    fault needing it is refused."""

    @property
    def workloads(self) -> tuple[str, ...]:
        names = set(self.workload_clients)
        if self.lock_clients:
            names.add("lock")
        return tuple(sorted(names))

    def check_options(self, opts: RunOptions) -> None:
        if opts.workload not in self.workloads:
            raise OptionError(
                f"{self.name} has no {opts.workload} workload; choose from "
                f"{', '.join(self.workloads)}"
            )
        if opts.workload == "lock" and opts.lock is not None and opts.lock not in self.lock_clients:
            raise OptionError(
                f"{self.name} has no lock implementation {opts.lock!r}; choose "
                f"from {', '.join(self.lock_clients)}"
            )
        if opts.read_mode is not None and opts.read_mode not in self.read_modes:
            modes = ", ".join(self.read_modes) or "none: it has one way to read"
            raise OptionError(
                f"{self.name} has no read mode {opts.read_mode!r}; choose from {modes}"
            )

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> Cluster:
        spec = TARGETS[self.name]
        return spec.build(
            ClusterOptions(
                run_id=secrets.token_hex(3),
                nodes=opts.nodes,
                image=opts.image,
                persistence=opts.persistence,
            )
        )

    def versions(self, cluster: Cluster) -> dict[str, str]:
        version = getattr(cluster, "version", None)
        return {self.name: str(version() if callable(version) else "unknown")}

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        if opts.workload == "lock" and self.lock_clients:
            impl = opts.lock or self.default_lock or next(iter(self.lock_clients))
            return self.lock_clients[impl](opts, cluster, resource)
        return self.workload_clients[opts.workload](opts, cluster, resource)
