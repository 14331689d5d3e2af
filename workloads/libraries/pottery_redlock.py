"""``--lock pottery-redlock``: pottery's ``Redlock(key=name, masters={...},
auto_release_time=ttl)`` over every server of the target, as its documentation shows it:
``acquire(timeout=wait)``, ``locked()`` (the seconds it still holds for, by its own clock:
it trusts clocks), ``release()`` raising ``ReleaseUnlockedLock`` when it no longer held a
quorum. No renewal unless asked (``extend``, which the holder does not), no fencing token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workloads.libraries.handle import HandleLock
from workloads.libraries.redis_connect import connect
from workloads.lock.own import Held


class PotteryRedlock(HandleLock):
    """pottery's Redlock over every server."""

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        import pottery  # the library's environment's, on the worker's path by now

        self.lib, self.not_held = pottery, (pottery.ReleaseUnlockedLock,)
        timeout = float(settings["timeout"])
        self.masters = {connect(address, timeout) for address in endpoints}

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.lib.Redlock(key=name, masters=self.masters, auto_release_time=ttl)
        return Held(None, lock) if lock.acquire(timeout=wait) else None

    def still_held(self, name: str, held: Held) -> bool | None:
        return bool(held.handle.locked() > 0)

    def close(self) -> None:
        for master in self.masters:
            master.close()


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> PotteryRedlock:
    """The lock of one client worker."""
    return PotteryRedlock(endpoints, settings)
