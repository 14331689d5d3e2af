"""How Consul runs: N agents in server mode that find each other with retry-join.

Autopilot's dead-server cleanup is off: with it, a server partitioned for about 8 s is
removed and re-admitted as a non-voter after healing, so a fault soon after a heal could
leave the cluster without a leader for long (see the shared notes on Docker clusters).
Update checks are off (the network is internal anyway). Go ignores libfaketime, so
faketime is off by default. Sessions may have TTLs from 1 s (``session_ttl_min``; Consul's
default minimum is 10 s), so lock workloads can run with short leases; Consul invalidates
a session between one and two TTLs after its last renewal.

On hosts: the ``consul`` package, which Debian has only up to bullseye (1.8.7, the version
our Docker image runs; a static Go binary that runs on bookworm and trixie): for other
releases the control machine fetches it from bullseye (``clusters.ssh.debs.SUITE_OVERRIDES``),
or ``--ssh-debs DIR`` uploads it. A ``consul`` already on a host's PATH (HashiCorp's package
or binary) is used as it is. The package's own ``consul.service`` is kept from starting.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clusters._probe import http_json
from clusters.consul.spec import SESSION_TTL_MIN
from clusters.server import Address, Launch, Peer, Place, ServerSpec, majority_vote

HTTP_PORT = 8500
SERVER_PORT = 8300
SERF_LAN_PORT = 8301
SERF_WAN_PORT = 8302
DNS_PORT = 8600


def leader_address(ip: str, port: int = HTTP_PORT) -> str | None:
    """What ``/v1/status/leader`` at ``ip`` says ("ip:8300"), None if none or no answer."""
    body = http_json("GET", f"http://{ip}:{port}/v1/status/leader")
    return body if isinstance(body, str) and body else None


@dataclass(frozen=True)
class ConsulServer(ServerSpec):
    """Consul 1.8 servers n1..nN."""

    name: str = "consul"
    process: str = "consul"
    port: int = HTTP_PORT
    ports: tuple[int, ...] = (SERVER_PORT, SERF_LAN_PORT, SERF_WAN_PORT, HTTP_PORT, DNS_PORT)
    image: str = "consul"
    packages: tuple[str, ...] = ("consul",)
    deb_suites: Mapping[str, str] = field(default_factory=lambda: {"consul": "bullseye"})
    services: tuple[str, ...] = ("consul",)
    commands: Mapping[str, str] = field(default_factory=lambda: {"consul": "consul"})
    start_timeout: float = 60.0
    version_argv: tuple[str, ...] | None = ("consul", "version")
    has_leader: bool = True

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """``consul agent`` on its JSON configuration."""
        conf = f"{place.conf}/consul.json"
        config = {
            "server": True,
            "bootstrap_expect": len(peers),
            "node_name": node.name,
            "datacenter": "dc1",
            "data_dir": f"{place.data}/consul",
            "bind_addr": node.ip,
            "advertise_addr": node.ip,
            "client_addr": "0.0.0.0",
            "retry_join": [p.ip for p in peers if p.name != node.name],
            "retry_interval": "1s",
            "disable_update_check": True,
            "disable_anonymous_signature": True,
            "autopilot": {"cleanup_dead_servers": False},
            "session_ttl_min": f"{SESSION_TTL_MIN:g}s",
            "performance": {"raft_multiplier": 1},
            "log_level": "INFO",
        }
        return Launch(
            ("consul", "agent", "-config-file", conf),
            files={conf: json.dumps(config, indent=2) + "\n"},
        )

    def healthy(self, at: Address) -> bool:
        """The agent answers and knows a leader."""
        return leader_address(*at) is not None

    def ready(self, ips: Mapping[str, Address]) -> bool:
        """Every server knows the same leader and the Raft configuration has all of them."""
        claims = [leader_address(*at) for at in ips.values()]
        if None in claims or len(set(claims)) != 1:
            return False
        first = next(iter(ips.values()))
        peers = http_json("GET", f"http://{first}/v1/status/peers")
        return isinstance(peers, list) and len(peers) == len(ips)

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        """The server a majority of servers report as leader, else None."""
        claim = majority_vote((leader_address(*at) for at in ips.values()), len(ips))
        by_address = {f"{at.ip}:{SERVER_PORT}": n for n, at in ips.items()}
        return by_address.get(claim or "")


SERVER = ConsulServer()
