"""Target name -> how to build its cluster: the one table the runner and the CLI read.

Each entry is small data plus a factory that imports its implementation only when called,
so importing this module (and listing targets) needs neither Docker nor the docker SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from core.cluster import Cluster, ClusterError


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """What a run may choose about its cluster; None means the target's default."""

    run_id: str
    nodes: int | None = None
    image: str | None = None
    """A custom image tag to use instead of building ours (see clusters/README.md)."""
    persistence: str | None = None
    """redis/redlock only: none, aof-everysec or aof-always."""
    faketime: bool | None = None
    """Preload libfaketime into the server (default on for redis, redlock and zookeeper)."""


Factory = Callable[[ClusterOptions], Cluster]


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """One target: what it is, its default size, and how to build its cluster."""

    name: str
    description: str
    default_nodes: int
    factory: Factory
    image: str | None = None
    """The image definition it runs (``clusters/<image>/``); None for a target without one."""
    persistence: tuple[str, ...] = ()
    """Accepted ``persistence`` values; empty when the target has no such option."""

    def build(self, options: ClusterOptions) -> Cluster:
        """The (not yet started) cluster for ``options``; ClusterError for a bad option."""
        self.check_persistence(options.persistence)
        return self.factory(options)

    def check_persistence(self, persistence: str | None) -> None:
        """ClusterError (one line) unless ``persistence`` is None or one this target takes
        (in Docker and over SSH alike)."""
        if persistence is not None and persistence not in self.persistence:
            choices = ", ".join(self.persistence) or "none: it has no persistence option"
            raise ClusterError(
                f"Target {self.name} does not accept persistence="
                f"{persistence!r}; choose from: {choices}"
            )


def in_docker(module: str, name: str = "SERVER") -> Factory:
    """The factory of the Docker cluster of the ``ServerSpec`` ``module.name`` (a target's
    ``server.py``); nothing is imported before it is called."""

    def factory(options: ClusterOptions) -> Cluster:
        server = getattr(importlib.import_module(module), name)
        cluster: Cluster = importlib.import_module("clusters.docker_cluster").docker_cluster(
            server, options
        )
        return cluster

    return factory


REDIS_PERSISTENCE = ("none", "aof-everysec", "aof-always")

TARGETS: dict[str, TargetSpec] = {
    "etcd": TargetSpec(
        "etcd",
        "etcd 3.5 (Debian trixie), Raft; locks via leases, CAS via txn",
        3,
        in_docker("clusters.etcd.server"),
        image="etcd",
    ),
    "zookeeper": TargetSpec(
        "zookeeper",
        "ZooKeeper 3.9 ensemble (Debian trixie), ZAB; locks via ephemeral nodes",
        3,
        in_docker("clusters.zookeeper.server"),
        image="zookeeper",
    ),
    "consul": TargetSpec(
        "consul",
        "Consul 1.8.7 servers (Debian bullseye), Raft; locks via sessions",
        3,
        in_docker("clusters.consul.server"),
        image="consul",
    ),
    "redis": TargetSpec(
        "redis",
        "one Redis 8.0 primary (built with libc malloc); SET NX PX locks",
        1,
        in_docker("clusters.redis.server", "REDIS"),
        image="redis",
        persistence=REDIS_PERSISTENCE,
    ),
    "redlock": TargetSpec(
        "redlock",
        "five independent Redis 8.0 servers for the Redlock algorithm",
        5,
        in_docker("clusters.redis.server", "REDLOCK"),
        image="redis",
        persistence=REDIS_PERSISTENCE,
    ),
    # "sim": the in-process simulated cluster (clusters/sim/), added by the runner's owner.
}
