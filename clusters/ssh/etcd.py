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

from clusters.etcd.cluster import CLIENT_PORT, PEER_PORT, EtcdCluster
from clusters.ssh.view import ViewedSshCluster


class SshEtcdCluster(ViewedSshCluster[EtcdCluster]):
    """etcd 3.5 members on SSH hosts n1..nN; Killable, Pausable, HasLeader, NodeControl."""

    name = "etcd"
    process = "etcd"
    port = CLIENT_PORT
    ports = (CLIENT_PORT, PEER_PORT)
    packages = ("etcd-server", "etcd-client")
    services = ("etcd",)
    start_timeout = 60.0
    version_argv = EtcdCluster.version_argv
    docker = EtcdCluster

    def server_command(self, node: str) -> list[str]:
        """``EtcdCluster``'s flags, with the data under the run's directory on the host."""
        view = self.view()
        argv = view.server_command(view._node(node))
        argv[argv.index("--data-dir") + 1] = f"{self.layout.data}/etcd"
        return argv

    def leader(self) -> str | None:
        """The member a majority of members report as leader, else None."""
        return self.view().leader()
