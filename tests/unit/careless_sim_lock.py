"""A lock of one's own over the sim service whose release is careless: it frees the lock
whoever holds it (as a bare ``DEL key`` would), while its ``PROMISES`` say its release
raises when the lock is no longer its own. The tests run it to see a release of another's
lock found, caused and attributed to the lock."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from own_sim_lock import SimLock

from workloads.libraries.promises import Promise, Promises
from workloads.lock.own import Held

DOC: Final = "https://example.org/careless-lock"

PROMISES: Final = Promises(
    Promise("token", "the sim's lock token", DOC),
    Promise("none", "the lease lapses a TTL after the grant", DOC),
    Promise("raise", "release() raises when the lock is no longer its own", DOC),
    Promise("service", "still_held() asks the service who holds the lock", DOC),
)


class CarelessLock(SimLock):
    """``own_sim_lock``'s lock, but its release frees the lock whoever holds it."""

    def release(self, name: str, held: Held) -> None:
        lease, _ = self.sim.holder(name)
        if lease is not None:
            self.sim.release(name, lease)


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> CarelessLock:
    return CarelessLock(endpoints, settings)
