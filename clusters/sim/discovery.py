"""The sim service as a ``workloads.discovery.RegistryBackend``: a member key on a lease.

Grace: the service expires a lease when its deadline has passed, before every operation
and in a sweep every ``SWEEP_INTERVAL_S`` (10 ms, ``clusters.sim.service``); 0.1 s covers
the sweep and one answer's way back.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusters.sim.client import SimClient


class SimRegistry(SimClient):
    """Registration and listing on the sim service."""

    GRACE = 0.1

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        super().__init__(addresses[0], timeout=timeout)

    def register(self, member: str, ttl: float) -> int:
        lease = self.grant_lease(ttl)
        self.call("member_register", member=member, lease=lease)
        return lease

    def members(self) -> list[str]:
        return list(self.call("member_list")["members"])
