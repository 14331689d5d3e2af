"""A cluster's private network: an internal Docker bridge with an explicit /24 subnet.

Internal means the nodes reach each other and the host (which holds the gateway address on
the bridge, so host-side clients connect straight to node addresses) but nothing beyond.
Subnets are taken from ``10.77.0.0/16``, skipping any /24 another Docker network already
uses, so several clusters can run side by side.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from core.cluster import ClusterError

if TYPE_CHECKING:
    import docker
    from docker.models.networks import Network

POOL = ipaddress.IPv4Network("10.77.0.0/16")
FIRST_HOST = 11
"""Node i (1-based) gets address ``.{FIRST_HOST + i - 1}`` of the subnet."""


def node_ip(subnet: str, index: int) -> str:
    """The fixed address of node ``index`` (1-based) in ``subnet``."""
    return str(ipaddress.ip_network(subnet)[FIRST_HOST + index - 1])


def create_network(
    client: docker.DockerClient, name: str, labels: dict[str, str], subnet: str | None = None
) -> tuple[Network, str]:
    """Create the internal network ``name``; returns it and its subnet.

    With ``subnet`` None, the first free /24 of ``POOL`` is used (retrying when another
    process took it meanwhile).
    """
    from docker.errors import APIError
    from docker.types import IPAMConfig, IPAMPool

    candidates = [subnet] if subnet else [str(s) for s in _free_subnets(client)]
    last_error = ""
    for cand in candidates:
        net = ipaddress.ip_network(cand)
        ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=cand, gateway=str(net[1]))])
        try:
            network = client.networks.create(
                name, driver="bridge", internal=True, ipam=ipam, labels=labels, check_duplicate=True
            )
        except APIError as e:
            last_error = str(e.explanation or e)
            if "overlap" in last_error.lower():
                continue
            raise ClusterError(f"Could not create network {name} ({cand}): {last_error}") from None
        return network, cand
    raise ClusterError(
        f"No free subnet for network {name} in {POOL} ({last_error}); remove "
        "leftover networks with `harness clusters down`"
    )


def _free_subnets(client: docker.DockerClient) -> list[ipaddress.IPv4Network]:
    used: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for net in client.api.networks():
        for cfg in (net.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet"):
                used.append(ipaddress.ip_network(cfg["Subnet"], strict=False))
    return [
        s
        for s in POOL.subnets(new_prefix=24)
        if s.network_address.packed[2] != 0 and not any(s.overlaps(u) for u in used)
    ]
