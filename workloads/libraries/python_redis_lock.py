"""``--lock python-redis-lock``: ``redis_lock.Lock(conn, name, expire=ttl,
auto_renewal=True)``, as its documentation shows it: its daemon thread renews the key every
``expire * 2/3`` s while held; ``acquire(timeout=wait)`` waits on its signal list (BLPOP);
``release()`` raises ``NotAcquired`` when the key was no longer its id. No fencing token.
It counts in whole seconds (``expire``, the acquire ``timeout``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workloads.libraries.handle import HandleLock
from workloads.libraries.redis_connect import connect
from workloads.lock.own import Held


class PythonRedisLock(HandleLock):
    """python-redis-lock on the worker's server."""

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        import redis_lock  # the library's environment's, on the worker's path by now

        self.lib, self.not_held = redis_lock, (redis_lock.NotAcquired,)
        # its acquire blocks in BLPOP for up to the wait: the connection must outwait it
        timeout = float(settings["timeout"]) + float(settings["wait"])
        self.redis = connect(endpoints[0], timeout)

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.lib.Lock(self.redis, name, expire=int(ttl), auto_renewal=True)
        return Held(None, lock) if lock.acquire(timeout=int(wait)) else None

    def still_held(self, name: str, held: Held) -> bool | None:
        return bool(held.handle.get_owner_id() == held.handle.id)


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> PythonRedisLock:
    """The lock of one client worker."""
    return PythonRedisLock(endpoints, settings)
