"""The two Redis locks, both ``workloads.lock.ttl.TtlLockBackend``s (no fencing token).

``set-nx`` (``SetNxLock``, target ``redis``): one server, ``redis-py``'s ``Lock``: ``SET name
owner NX PX ttl`` to acquire, its compare-and-delete script to release, its
compare-and-reset-TTL script (``reacquire``) for the watchdog. The lock is certainly held
for the TTL after the winning ``SET`` left (``validity``), the server's clock permitting.

``redlock`` (``RedlockLock``, target ``redlock``): the published algorithm over every
server of the cluster (``workloads.lock.redlock``), each asked with a timeout small compared
with the TTL (1 % of it, at least 50 ms).
"""

from __future__ import annotations

from collections.abc import Sequence

from redis.lock import Lock

from clusters.redis.connection import RedisServer, connect
from clusters.redis.errors import classified
from workloads.lock.redlock import Redlock

MIN_SERVER_TIMEOUT = 0.05


class SetNxLock:
    """A lock on one Redis server, through ``redis-py``'s ``Lock``."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        ttl: float = 10.0,
    ) -> None:
        self.address = addresses[0]
        self.redis = connect(self.address, timeout)
        self.prefix = prefix
        self.ttl = ttl

    @property
    def validity(self) -> float:
        return self.ttl

    def _lock(self, name: str, owner: str | None = None) -> Lock:
        lock = Lock(self.redis, f"{self.prefix}/lock/{name}", timeout=self.ttl, thread_local=False)
        if owner is not None:
            lock.local.token = owner.encode()
        return lock

    def try_acquire(self, name: str, owner: str) -> bool:
        with classified(f"SET {name} NX on {self.address}"):
            return bool(self._lock(name).acquire(blocking=False, token=owner))

    def extend(self, name: str, owner: str) -> None:
        with classified(f"extend {name} on {self.address}"):
            self._lock(name, owner).reacquire()

    def release(self, name: str, owner: str) -> None:
        with classified(f"release {name} on {self.address}"):
            self._lock(name, owner).release()

    def close(self) -> None:
        self.redis.close()


class RedlockLock:
    """Redlock over every server in ``addresses``."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        ttl: float = 10.0,
    ) -> None:
        each = min(timeout, max(MIN_SERVER_TIMEOUT, 0.01 * ttl))
        self.redlock = Redlock([RedisServer(a, each) for a in addresses], ttl)
        self.prefix = prefix

    @property
    def validity(self) -> float:
        return self.redlock.validity

    def _key(self, name: str) -> str:
        return f"{self.prefix}/redlock/{name}"

    def try_acquire(self, name: str, owner: str) -> bool:
        return self.redlock.acquire(self._key(name), owner)

    def extend(self, name: str, owner: str) -> None:
        self.redlock.extend(self._key(name), owner)

    def release(self, name: str, owner: str) -> None:
        self.redlock.release(self._key(name), owner)

    def close(self) -> None:
        self.redlock.close()
