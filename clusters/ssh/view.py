"""A Docker target's cluster laid out on SSH hosts: its logic without its containers.

The Docker targets' cluster classes (``clusters/<target>/cluster.py``) know their server's
flags, health probe and leader query, and read the nodes' names and addresses from
``_nodes``, which ``DockerCluster.layout`` fills from a Docker subnet. Hosts have arbitrary
addresses, so a view is given them directly (``docker_view``). A view is never started and
touches no container; the SSH targets ask it rather than repeat what it knows.
``ViewedSshCluster`` is such an SSH target: it keeps its view and asks it whether a node
is healthy (``clusters/ssh/etcd.py``, ``zookeeper.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from clusters.docker_cluster import DockerCluster, Node
from clusters.ssh.cluster import SshCluster

D = TypeVar("D", bound=DockerCluster)


def docker_view(cls: type[D], run_id: str, addresses: Mapping[str, str], **options: Any) -> D:
    """A ``cls`` (with ``options``) whose nodes are ``addresses`` (node -> IPv4), n1 first,
    for its configuration and probes only."""
    view = cls(run_id=run_id, nodes=len(addresses), **options)
    view._nodes = {
        name: Node(name, i, ip, container="")
        for i, (name, ip) in enumerate(addresses.items(), start=1)
    }
    return view


class ViewedSshCluster(SshCluster, Generic[D]):
    """An SSH target whose probes are its Docker target's (``docker``, a ``DockerCluster``
    class), asked of a view of it over this cluster's hosts."""

    docker: type[D]
    _docker_view: D | None = None

    def view(self) -> D:
        """The view over this cluster's hosts (made on first use, once the addresses are
        known)."""
        if self._docker_view is None:
            self._docker_view = self.make_view()
        return self._docker_view

    def make_view(self) -> D:
        """The view; a target adjusts it here when it needs to (say, where files live)."""
        return docker_view(self.docker, self.run_id, {n: self.ip(n) for n in self.nodes()})

    def is_healthy(self, node: str) -> bool:
        """The Docker target's health probe, aimed at ``node``'s host."""
        return self.view().is_healthy(node)
