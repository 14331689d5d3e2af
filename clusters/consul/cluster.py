"""Consul servers: N agents in server mode that find each other with retry-join.

Autopilot's dead-server cleanup is off: with it, a server partitioned for about 8 s is
removed and re-admitted as a non-voter after healing, so a fault soon after a heal could
leave the cluster without a leader for long (see the shared notes on Docker clusters).
Update checks are off (the network is internal anyway). Go ignores libfaketime, so
faketime is off by default. Sessions may have TTLs from 1 s (``session_ttl_min``; Consul's
default minimum is 10 s), so lock workloads can run with short leases; Consul invalidates
a session between one and two TTLs after its last renewal.
"""

from __future__ import annotations

import json

from clusters._probe import http_json
from clusters.consul.spec import SESSION_TTL_MIN
from clusters.docker_cluster import DockerCluster, Node, majority_vote

HTTP_PORT = 8500
SERVER_PORT = 8300
CONF = "/harness/consul.json"


class ConsulCluster(DockerCluster):
    """Consul 1.8 servers n1..nN; Killable, Pausable, HasLeader."""

    version_argv = ("consul", "version")

    name = "consul"
    image_name = "consul"
    process = "consul"
    port = HTTP_PORT
    start_timeout = 60.0
    conf_file = CONF
    """Where the agent's configuration is written (a host's run directory, over SSH)."""
    data_dir = "/data/consul"
    """The agent's data directory."""

    def node_files(self, node: Node) -> dict[str, str]:
        """The agent's JSON configuration."""
        config = {
            "server": True,
            "bootstrap_expect": self.size,
            "node_name": node.name,
            "datacenter": "dc1",
            "data_dir": self.data_dir,
            "bind_addr": node.ip,
            "advertise_addr": node.ip,
            "client_addr": "0.0.0.0",
            "retry_join": [n.ip for n in self._nodes.values() if n.name != node.name],
            "retry_interval": "1s",
            "disable_update_check": True,
            "disable_anonymous_signature": True,
            "autopilot": {"cleanup_dead_servers": False},
            "session_ttl_min": f"{SESSION_TTL_MIN:g}s",
            "performance": {"raft_multiplier": 1},
            "log_level": "INFO",
        }
        return {self.conf_file: json.dumps(config, indent=2) + "\n"}

    def server_command(self, node: Node) -> list[str]:
        """``consul agent`` on the written configuration."""
        return ["consul", "agent", "-config-file", self.conf_file]

    def leader_address(self, node: str) -> str | None:
        """What ``/v1/status/leader`` on ``node`` says ("ip:8300"), None if none or no answer."""
        body = http_json("GET", f"http://{self.ip(node)}:{HTTP_PORT}/v1/status/leader")
        return body if isinstance(body, str) and body else None

    def is_healthy(self, node: str) -> bool:
        """The agent answers and knows a leader."""
        return self.leader_address(node) is not None

    def is_ready(self) -> bool:
        """Every server knows the same leader and the Raft configuration has all of them."""
        claims = [self.leader_address(n) for n in self._nodes]
        if None in claims or len(set(claims)) != 1:
            return False
        peers = http_json("GET", f"http://{self.ip('n1')}:{HTTP_PORT}/v1/status/peers")
        return isinstance(peers, list) and len(peers) == self.size

    def leader(self) -> str | None:
        """The server a majority of servers report as leader, else None."""
        claim = majority_vote((self.leader_address(n) for n in self._nodes), self.size)
        by_address = {f"{n.ip}:{SERVER_PORT}": n.name for n in self._nodes.values()}
        return by_address.get(claim or "")
