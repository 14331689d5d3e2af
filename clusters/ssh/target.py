"""A run's target on SSH hosts: the same clients and checks, a cluster of real machines.

``ssh_target(target, hosts, options)`` wraps the target the run resolved (``clusters/etcd/
target.py``'s, say): its workloads, clients, option checks and versions stay the same,
only ``make_cluster`` builds the cluster on the hosts (``make_ssh_cluster``). Two option
checks change: ``--nodes`` is the host list's length, so a different size is refused, and
clock faults are allowed for every target, since they set the hosts' real clocks
(``nemesis.host_clock``), which Go servers read too.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence
from typing import Any

from clusters.remote.hosts import HostSpec
from clusters.ssh.factory import SshClusterOptions, check_ssh_options, make_ssh_cluster
from core.abilities import Ability
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import OptionError, RunOptions


class SshTarget:
    """A ``harness.targets.Target`` whose cluster runs on SSH hosts."""

    def __init__(
        self, inner: Any, hosts: Sequence[str | HostSpec], options: SshClusterOptions
    ) -> None:
        self.inner = inner
        self.hosts = list(hosts)
        self.options = options
        self.name: str = inner.name
        self.workloads: tuple[str, ...] = inner.workloads
        # The hosts' own clocks move (``nemesis.host_clock``): Go servers' too.
        self.abilities: frozenset[Ability] = inner.abilities | {Ability.CLOCK}
        self.lacks: dict[Ability, str] = {
            a: why for a, why in inner.lacks.items() if a not in self.abilities
        }

    def check_options(self, opts: RunOptions) -> None:
        """The inner target's checks, with the size fixed (clock faults are allowed:
        ``abilities``)."""
        if opts.nodes is not None and opts.nodes != len(self.hosts):
            raise OptionError(
                f"--nodes {opts.nodes} but {len(self.hosts)} hosts were named: "
                "over SSH the cluster has one node per host"
            )
        if opts.image is not None:
            raise OptionError(
                "--image chooses a Docker image; over SSH the hosts' packages "
                "are used: leave it out"
            )
        self.inner.check_options(opts)

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> Cluster:
        """The cluster on the hosts, under a fresh run id (one directory per run), with
        the run's ``--persistence``."""
        run_id = f"{self.name}-{secrets.token_hex(3)}"
        return make_ssh_cluster(
            self.name,
            self.hosts,
            dataclasses.replace(self.options, run_id=run_id, persistence=opts.persistence),
        )

    def versions(self, cluster: Cluster) -> dict[str, str]:
        versions: dict[str, str] = self.inner.versions(cluster)
        return versions

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        factory: ClientFactory = self.inner.client_factory(opts, cluster, resource)
        return factory


def ssh_target(
    target: Any, hosts: Sequence[str | HostSpec], options: SshClusterOptions | None = None
) -> SshTarget:
    """``target`` (as ``harness.targets.resolve_target`` returns it) on SSH ``hosts``;
    ClusterError (one line) for a target that cannot run over SSH or bad SSH options,
    before anything starts or any host is contacted."""
    opts = options or SshClusterOptions()
    check_ssh_options(target.name, hosts, opts)
    return SshTarget(target, hosts, opts)
