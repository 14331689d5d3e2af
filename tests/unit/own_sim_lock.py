"""A lock of one's own over the sim service, for the tests that run ``--lock
own_sim_lock:make`` without Docker: a lease of the TTL (never renewed: it lapses a TTL
after the grant, as redis-py's lock does) and the service's lock under it, whose token it
gives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clusters.sim.client import LeaseNotFound, Rejected, SimClient
from workloads.lock.own import Held, LockLost


class SimLock:
    """The sim service's lock on a lease of its own, unrenewed."""

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        self.sim = SimClient(endpoints[0], float(settings["timeout"]))

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lease = self.sim.grant_lease(ttl)
        try:
            return Held(self.sim.acquire(name, lease, wait), lease, lease)
        except Rejected:
            self.sim.revoke(lease)
            return None

    def still_held(self, name: str, held: Held) -> bool | None:
        return self.sim.holder(name)[0] == held.handle

    def release(self, name: str, held: Held) -> None:
        try:
            self.sim.release(name, held.handle)
        except LeaseNotFound as e:
            raise LockLost(str(e)) from e

    def close(self) -> None:
        self.sim.close()


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> SimLock:
    return SimLock(endpoints, settings)
