"""An etcd cluster: N members bootstrapped together from a static initial-cluster list.

Clients use the v3 JSON gateway on port 2379 (``/v3/kv/...``; keys and values base64).
Health is ``/health`` on every member; the leader is read from ``/v3/maintenance/status``.
"""

from __future__ import annotations

from typing import Any

from clusters._probe import http_json
from clusters.docker_cluster import DockerCluster, Node, majority_vote

CLIENT_PORT = 2379
PEER_PORT = 2380


class EtcdCluster(DockerCluster):
    """etcd 3.5 members n1..nN; Killable, Pausable, HasLeader."""

    version_argv = ("etcd", "--version")

    name = "etcd"
    image_name = "etcd"
    process = "etcd"
    port = CLIENT_PORT
    start_timeout = 30.0

    def server_command(self, node: Node) -> list[str]:
        """etcd's flags: listen on the node address, the static cluster, data on tmpfs."""
        peers = ",".join(f"{n.name}=http://{n.ip}:{PEER_PORT}" for n in self._nodes.values())
        return [
            "etcd",
            "--name",
            node.name,
            "--data-dir",
            "/data/etcd",
            "--listen-client-urls",
            f"http://{node.ip}:{CLIENT_PORT},http://127.0.0.1:{CLIENT_PORT}",
            "--advertise-client-urls",
            f"http://{node.ip}:{CLIENT_PORT}",
            "--listen-peer-urls",
            f"http://{node.ip}:{PEER_PORT}",
            "--initial-advertise-peer-urls",
            f"http://{node.ip}:{PEER_PORT}",
            "--initial-cluster",
            peers,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            f"harness-{self.run_id}",
        ]

    def is_healthy(self, node: str) -> bool:
        """``GET /health`` says true (the member has a leader and serves)."""
        body = http_json("GET", f"http://{self.ip(node)}:{CLIENT_PORT}/health")
        return isinstance(body, dict) and body.get("health") == "true"

    def leader(self) -> str | None:
        """The member a majority of members report as leader, else None."""
        statuses = {node: self.status(node) for node in self._nodes}
        names = {str(st["header"]["member_id"]): node for node, st in statuses.items() if st}
        claims = [str(st.get("leader", "")) for st in statuses.values() if st]
        return names.get(majority_vote(claims, self.size) or "")

    def status(self, node: str) -> dict[str, Any] | None:
        """The member's ``/v3/maintenance/status`` answer, None when it does not answer."""
        body = http_json("POST", f"http://{self.ip(node)}:{CLIENT_PORT}/v3/maintenance/status", {})
        return body if isinstance(body, dict) and "header" in body else None
