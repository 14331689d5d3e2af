"""How etcd runs: N members bootstrapped together from a static initial-cluster list.

Clients use the v3 JSON gateway on port 2379 (``/v3/kv/...``; keys and values base64).
Health is ``/health`` on every member; the leader is read from ``/v3/maintenance/status``.
On hosts: Debian's ``etcd-server`` and ``etcd-client``; the package's own ``etcd.service``
is kept from starting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from clusters._probe import http_json
from clusters.releases import Release, table
from clusters.server import Address, Launch, Peer, Place, ServerSpec, majority_vote
from core.cluster import ClusterError

CLIENT_PORT = 2379
PEER_PORT = 2380


@dataclass(frozen=True, slots=True)
class EtcdRelease(Release):
    """An etcd release and whether its server takes ``--unsafe-no-fsync`` (persistence
    ``no-fsync``)."""

    no_fsync: bool = True


RELEASES = table(
    EtcdRelease("bookworm", "etcd-server", "3.4.23-4+b4", no_fsync=False),
    EtcdRelease("trixie", "etcd-server", "3.5.16-4"),
)
"""Debian's etcd-server per release (Packages of 2026-12-05)."""
MISSING = {
    "bullseye": "etcd 3.3.25 serves its JSON gateway under /v3beta, not the /v3 the clients use",
    "sid": "sid has no python3-fuse for the power-loss layer (etcd 3.5.30 otherwise)",
}


@dataclass(frozen=True)
class EtcdServer(ServerSpec):
    """etcd 3.5 members n1..nN; the cluster's token is ``harness-<run id>``."""

    name: str = "etcd"
    process: str = "etcd"
    port: int = CLIENT_PORT
    ports: tuple[int, ...] = (CLIENT_PORT, PEER_PORT)
    image: str = "etcd"
    packages: tuple[str, ...] = ("etcd-server", "etcd-client")
    services: tuple[str, ...] = ("etcd",)
    start_timeout: float = 30.0
    host_start_timeout: float | None = 60.0
    version_argv: tuple[str, ...] | None = ("etcd", "--version")
    has_leader: bool = True
    releases: Mapping[str, Release] = field(default_factory=lambda: RELEASES)
    missing: Mapping[str, str] = field(default_factory=lambda: MISSING)
    fsync: bool = True
    """False: ``--unsafe-no-fsync`` (persistence ``no-fsync``), the WAL never fsynced."""

    def with_persistence(self, persistence: str | None) -> EtcdServer:
        """``fsync`` (None: the default) or ``no-fsync`` where its release has the flag;
        ClusterError for another."""
        if persistence not in (None, "fsync", "no-fsync"):
            raise ClusterError(
                f"Unknown etcd persistence {persistence!r}; choose from: fsync, no-fsync"
            )
        release = self.releases.get(self.suite)
        if persistence == "no-fsync" and isinstance(release, EtcdRelease) and not release.no_fsync:
            raise ClusterError(
                f"etcd {release.version} ({release.suite}) has no --unsafe-no-fsync (etcd "
                "3.5 added it): leave out --persistence no-fsync or --server-version"
            )
        return replace(self, fsync=persistence != "no-fsync")

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """etcd's flags: listen on the node address, the static cluster, data in place."""
        initial = ",".join(f"{p.name}=http://{p.ip}:{PEER_PORT}" for p in peers)
        return Launch(
            (
                "etcd",
                "--name",
                node.name,
                "--data-dir",
                f"{place.data}/etcd",
                "--listen-client-urls",
                f"http://{node.ip}:{CLIENT_PORT},http://127.0.0.1:{CLIENT_PORT}",
                "--advertise-client-urls",
                f"http://{node.ip}:{CLIENT_PORT}",
                "--listen-peer-urls",
                f"http://{node.ip}:{PEER_PORT}",
                "--initial-advertise-peer-urls",
                f"http://{node.ip}:{PEER_PORT}",
                "--initial-cluster",
                initial,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                f"harness-{place.run_id}",
                *(() if self.fsync else ("--unsafe-no-fsync",)),
            )
        )

    def healthy(self, at: Address) -> bool:
        """``GET /health`` says true (the member has a leader and serves)."""
        body = http_json("GET", f"http://{at}/health")
        return isinstance(body, dict) and body.get("health") == "true"

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        """The member a majority of members report as leader, else None."""
        statuses = {node: status(at.ip, at.port) for node, at in ips.items()}
        names = {str(st["header"]["member_id"]): node for node, st in statuses.items() if st}
        claims = [str(st.get("leader", "")) for st in statuses.values() if st]
        return names.get(majority_vote(claims, len(ips)) or "")


def status(ip: str, port: int = CLIENT_PORT) -> dict[str, Any] | None:
    """The member's ``/v3/maintenance/status`` answer, None when it does not answer."""
    body = http_json("POST", f"http://{ip}:{port}/v3/maintenance/status", {})
    return body if isinstance(body, dict) and "header" in body else None


SERVER = EtcdServer()
