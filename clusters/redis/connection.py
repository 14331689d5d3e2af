"""One ``redis-py`` connection to one Redis server, set up for testing.

No automatic retries (see ``clusters.redis.errors``), a connect timeout and an answer
timeout, and the lock scripts every Redis lock here shares: ``redis-py``'s own ``Lock``
scripts (compare-and-delete, compare-and-reset-TTL), which Redlock runs on each server.
"""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.lock import Lock
from redis.retry import Retry

from clusters.redis.errors import classified


def no_retries() -> Retry:
    """A retry policy that never retries."""
    return Retry(NoBackoff(), 0)


def connect(address: str, timeout: float) -> redis.Redis:
    """A client of the server at ``address`` ("ip:port") answering within ``timeout`` s."""
    host, _, port = address.rpartition(":")
    return redis.Redis(
        host=host,
        port=int(port),
        socket_timeout=timeout,
        socket_connect_timeout=min(timeout, 2.0),
        retry=no_retries(),
        decode_responses=False,
    )


class RedisServer:
    """One server's lock scripts (a ``workloads.lock.redlock.Server``)."""

    def __init__(self, address: str, timeout: float) -> None:
        self.address = address
        self.redis = connect(address, timeout)
        self._lock = Lock(self.redis, "-")  # registers the scripts on this client

    def set_nx(self, name: str, owner: str, ttl_ms: int) -> bool:
        with classified(f"SET {name} NX on {self.address}"):
            return bool(self.redis.set(name, owner, nx=True, px=ttl_ms))

    def extend(self, name: str, owner: str, ttl_ms: int) -> bool:
        script = self._lock.lua_reacquire
        assert script is not None
        with classified(f"extend {name} on {self.address}"):
            return bool(script(keys=[name], args=[owner, ttl_ms], client=self.redis))

    def delete(self, name: str, owner: str) -> bool:
        script = self._lock.lua_release
        assert script is not None
        with classified(f"release {name} on {self.address}"):
            return bool(script(keys=[name], args=[owner], client=self.redis))

    def close(self) -> None:
        self.redis.close()
