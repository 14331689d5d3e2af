"""Redis as a ``workloads.discovery.RegistryBackend``: a member key with a TTL.

Redis has the primitive (keys with a TTL, refreshed): ``register`` sets
``<prefix>:registry:<member>`` with ``PX`` the TTL, the keeper refreshes it with
``PEXPIRE`` (0: the key is gone), ``members`` scans the prefix. One primary, no
replication here: a registration lives on the one server, as Redis-based discovery does.

Grace: Redis serves no expired key: a key past its TTL is deleted when a command touches
it, and ``SCAN`` skips (and expires) the keys it finds timed out ("How Redis expires
keys", the ``EXPIRE`` command's documentation; ``expireIfNeeded`` in ``db.c``): the
grace is only the way back of an answer, 0.1 s allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusters.redis.connection import connect
from clusters.redis.errors import classified
from workloads.common.lease import LeaseNotFound


class RedisDiscovery:
    """Registration (keys with a TTL) and listing (a scan) on one Redis server."""

    GRACE = 0.1

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.address = addresses[0]
        self.redis = connect(self.address, timeout)
        self.dir = f"{prefix}:registry:"

    def register(self, member: str, ttl: float) -> str:
        """The lease is ``<ttl ms>/<key>``: the keeper, on a connection of its own, renews
        it knowing nothing else."""
        key, ttl_ms = self.dir + member, round(ttl * 1000)
        with classified(f"register {member} on {self.address}"):
            self.redis.set(key, member, px=ttl_ms)
        return f"{ttl_ms}/{key}"

    def keepalive(self, lease: str) -> float:
        ttl_ms, _, key = lease.partition("/")
        with classified(f"refresh {key} on {self.address}"):
            kept = self.redis.pexpire(key, int(ttl_ms))
        if not kept:
            raise LeaseNotFound(f"refresh {key} on {self.address}: the key has expired")
        return int(ttl_ms) / 1000

    def revoke(self, lease: str) -> None:
        key = lease.partition("/")[2]
        with classified(f"deregister {key} on {self.address}"):
            self.redis.delete(key)

    def members(self) -> list[str]:
        with classified(f"list members on {self.address}"):
            keys = list(self.redis.scan_iter(match=self.dir + "*", count=1000))
        return [k.decode().removeprefix(self.dir) for k in keys]

    def close(self) -> None:
        self.redis.close()
