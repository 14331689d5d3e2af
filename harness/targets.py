"""Targets as the run sees them: how to make the cluster and the clients of a workload.

A ``Target`` is the glue between a ``clusters/<name>`` package and a run: it makes the
cluster from the run options, refuses options it cannot honour (one line, before anything
starts), reports versions, and builds the client factory of each workload it supports.
Targets are imported lazily, so ``sim`` works on a machine without Docker.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console

from core.abilities import Ability
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.errors import HarnessError
from core.options import RunOptions

if TYPE_CHECKING:
    from clusters.remote.hosts import HostSpec
    from clusters.ssh.factory import SshClusterOptions

# name -> "module:attribute" of an object implementing Target.
TARGETS: dict[str, str] = {
    "sim": "clusters.sim.target:TARGET",
    "etcd": "clusters.etcd.target:TARGET",
    "zookeeper": "clusters.zookeeper.target:TARGET",
    "consul": "clusters.consul.target:TARGET",
    "redis": "clusters.redis.target:TARGET",
    "redlock": "clusters.redis.target:REDLOCK",
}


class Target(Protocol):
    """What a run needs of a target."""

    name: str
    workloads: tuple[str, ...]

    @property
    def abilities(self) -> frozenset[Ability]:
        """What faults may do to its cluster (``core.abilities``)."""
        ...

    @property
    def lacks(self) -> Mapping[Ability, str]:
        """Why it lacks an ability, said when a fault needing it is refused."""
        ...

    def check_options(self, opts: RunOptions) -> None:
        """Raise OptionError for options this target cannot honour."""
        ...

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> Cluster: ...

    def versions(self, cluster: Cluster) -> dict[str, str]: ...

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        """The clients of ``opts.workload``; ``resource`` is the protected resource's
        address for lock and election workloads."""
        ...


def resolve_target(name: str) -> Target:
    spec = TARGETS.get(name)
    if spec is None:
        raise HarnessError(f"unknown target {name!r}: choose one of {', '.join(TARGETS)}")
    module, attr = spec.split(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise HarnessError(f"target {name!r} is not available in this build ({e})") from None
    target: Target = getattr(mod, attr)
    return target


def build_images(targets: list[str], console: Console) -> int:
    from clusters import images

    names = targets or [t for t in TARGETS if t != "sim"]
    unknown = [t for t in names if t not in TARGETS or t == "sim"]
    if unknown:
        raise HarnessError(
            f"no image for {', '.join(unknown)}: images exist for "
            + ", ".join(t for t in TARGETS if t != "sim")
        )
    images.build_images(names, progress=lambda msg: console.print(msg, highlight=False))
    return 0


def clusters_down(console: Console) -> int:
    from clusters import cleanup

    removed: Any = cleanup.down()
    console.print(f"removed: {removed or 'nothing'}")
    return 0


def clusters_heal(console: Console) -> int:
    from clusters import cleanup

    healed: Any = cleanup.heal()
    console.print(f"healed: {healed or 'nothing'}")
    return 0


def clean_ssh_hosts(
    action: str, hosts: Sequence[HostSpec], options: SshClusterOptions, console: Console
) -> int:
    """``harness clusters heal|down --ssh``: one line per host saying what was undone (and
    one per thing that could not be); 1 when something could not, else 0."""
    import logging

    from clusters.ssh.cleanup import clean_hosts
    from clusters.ssh.factory import ssh_remotes

    # A host out of reach is one line of its report; paramiko's own traceback of it (on
    # stderr, no logging being set up here) would only repeat that line.
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    reports = clean_hosts(action, hosts, ssh_remotes(options))
    for report in reports:
        console.print(str(report), highlight=False, markup=False, soft_wrap=True)
    return 1 if any(r.problems for r in reports) else 0
