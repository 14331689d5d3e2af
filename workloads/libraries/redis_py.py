"""``--lock redis-py``: redis-py's own ``Lock``, as its documentation shows it:
``r.lock(name, timeout=ttl, blocking_timeout=wait)``, ``acquire()``, ``release()`` (raising
``LockNotOwnedError`` when the key is no longer its token), ``owned()``. No renewal: the
key expires ``ttl`` after the grant whatever the holder does; no fencing token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from redis.exceptions import LockNotOwnedError

from workloads.libraries.handle import HandleLock
from workloads.libraries.redis_connect import connect
from workloads.lock.own import Held


class RedisPyLock(HandleLock):
    """redis-py's ``Lock`` on the worker's server."""

    not_held = (LockNotOwnedError,)

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        self.redis = connect(endpoints[0], float(settings["timeout"]))

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.redis.lock(name, timeout=ttl, blocking_timeout=wait, thread_local=False)
        return Held(None, lock) if lock.acquire() else None

    def still_held(self, name: str, held: Held) -> bool | None:
        return bool(held.handle.owned())


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> RedisPyLock:
    """The lock of one client worker."""
    return RedisPyLock(endpoints, settings)
