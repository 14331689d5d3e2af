"""Consul on SSH hosts: the Docker target's configuration and probes, on real machines.

The agents' configuration (server mode, ``bootstrap_expect``, ``retry_join`` of every
peer, autopilot's dead-server cleanup off, 1 s minimum session TTL), the health probe
(``/v1/status/leader``), readiness (one leader, every server in the Raft configuration)
and the leader query (by majority) are those of ``clusters.consul.cluster.ConsulCluster``,
asked through a view of it laid out on the hosts' addresses (``clusters.ssh.view``); only
where the configuration and the data live differ: under the run's directory on each host.

Package: ``consul``, which Debian has only up to bullseye (1.8.7, the version our Docker
image runs; a static Go binary that runs on bookworm and trixie): for other releases the
control machine fetches it from bullseye (``clusters.ssh.debs.SUITE_OVERRIDES``), or
``--ssh-debs DIR`` uploads it. A ``consul`` already on a host's PATH (HashiCorp's
package or binary) is used as it is. The package's own ``consul.service`` is kept from
starting.
"""

from __future__ import annotations

from clusters.consul.cluster import HTTP_PORT, SERVER_PORT, ConsulCluster
from clusters.ssh.cluster import SshCluster
from clusters.ssh.view import docker_view

SERF_LAN_PORT = 8301
SERF_WAN_PORT = 8302
DNS_PORT = 8600


class SshConsulCluster(SshCluster):
    """Consul servers on SSH hosts n1..nN; Killable, Pausable, HasLeader, NodeControl."""

    name = "consul"
    process = "consul"
    port = HTTP_PORT
    ports = (SERVER_PORT, SERF_LAN_PORT, SERF_WAN_PORT, HTTP_PORT, DNS_PORT)
    packages = ("consul",)
    services = ("consul",)
    commands = {"consul": "consul"}
    start_timeout = 60.0
    version_argv = ConsulCluster.version_argv

    _view: ConsulCluster | None = None

    def consul(self) -> ConsulCluster:
        """The view of the Docker target's Consul logic over this cluster's hosts."""
        if self._view is None:
            view = docker_view(ConsulCluster, self.run_id, {n: self.ip(n) for n in self.nodes()})
            view.conf_file = f"{self.layout.conf}/consul.json"
            view.data_dir = f"{self.layout.data}/consul"
            self._view = view
        return self._view

    def node_files(self, node: str) -> dict[str, str]:
        """The agent's configuration, in the run's directory on the host."""
        view = self.consul()
        return view.node_files(view._node(node))

    def server_command(self, node: str) -> list[str]:
        view = self.consul()
        return view.server_command(view._node(node))

    def is_healthy(self, node: str) -> bool:
        return self.consul().is_healthy(node)

    def is_ready(self) -> bool:
        return self.consul().is_ready()

    def leader(self) -> str | None:
        """The server a majority of servers report as leader, else None."""
        return self.consul().leader()
