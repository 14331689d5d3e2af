"""etcd on SSH hosts: the Docker target's configuration and probes, on real machines.

The server's flags (static bootstrap of every member, client and peer URLs on the node's
address, the run's cluster token), the health probe (``/health``) and the leader query
(``/v3/maintenance/status``, by majority) are those of ``clusters.etcd.cluster.
EtcdCluster``. Rather than repeat them, this module asks that class, through a view of it
laid out on the hosts' addresses (no container is involved: the view only knows names and
addresses); only the data directory differs, since a host keeps it under the run's
directory. Packages: Debian's ``etcd-server`` and ``etcd-client``; the package's own
``etcd.service`` is kept from starting.
"""

from __future__ import annotations

from clusters.docker_cluster import Node
from clusters.etcd.cluster import CLIENT_PORT, PEER_PORT, EtcdCluster
from clusters.ssh.cluster import SshCluster


def etcd_view(run_id: str, addresses: dict[str, str]) -> EtcdCluster:
    """An ``EtcdCluster`` laid out on ``addresses`` (node -> IPv4), for its configuration
    and probes only: it is never started, and it touches no container."""
    view = EtcdCluster(run_id=run_id, nodes=len(addresses))
    # EtcdCluster reads its members from _nodes, which DockerCluster.layout() fills from a
    # Docker subnet; hosts have arbitrary addresses, so the layout is given directly.
    view._nodes = {name: Node(name, i, ip, container="")
                   for i, (name, ip) in enumerate(addresses.items(), start=1)}
    return view


class SshEtcdCluster(SshCluster):
    """etcd 3.5 members on SSH hosts n1..nN; Killable, Pausable, HasLeader, NodeControl."""

    name = "etcd"
    process = "etcd"
    port = CLIENT_PORT
    ports = (CLIENT_PORT, PEER_PORT)
    packages = ("etcd-server", "etcd-client")
    services = ("etcd",)
    start_timeout = 60.0

    _view: EtcdCluster | None = None

    def etcd(self) -> EtcdCluster:
        """The view of the Docker target's etcd logic over this cluster's hosts."""
        if self._view is None:
            self._view = etcd_view(self.run_id, {n: self.ip(n) for n in self.nodes()})
        return self._view

    def server_command(self, node: str) -> list[str]:
        """``EtcdCluster``'s flags, with the data under the run's directory on the host."""
        view = self.etcd()
        argv = view.server_command(view._node(node))
        argv[argv.index("--data-dir") + 1] = f"{self.layout.data}/etcd"
        return argv

    def is_healthy(self, node: str) -> bool:
        return self.etcd().is_healthy(node)

    def leader(self) -> str | None:
        """The member a majority of members report as leader, else None."""
        return self.etcd().leader()

    def version(self) -> str:
        """``etcd --version``'s first line on n1 (``etcd Version: 3.5.16``)."""
        _, out = self.exec(self.nodes()[0], ["etcd", "--version"])
        return out.strip().splitlines()[0] if out.strip() else "unknown"
