"""``--lock tooz-zookeeper``, ``tooz-redis``, ``tooz-etcd3gw``, ``tooz-postgresql``:
OpenStack tooz's coordinator and its lock, as tooz's documentation shows them::

    coordinator = coordination.get_coordinator(url, member_id)
    coordinator.start(start_heart=True)
    lock = coordinator.get_lock(name)
    lock.acquire(blocking=wait)   # True, or False when not granted in ``wait`` s
    lock.release()                # True, or False when it no longer held it

The heartbeat thread ``start_heart`` starts is what keeps the lock: it renews the lock's
key (Redis: ``PEXPIRE``; etcd: a lease keepalive) every half of ``min(lock_timeout,
membership_timeout)``, and ZooKeeper's session is kept by kazoo's own pings. The lock's
TTL is the driver's ``lock_timeout`` (ZooKeeper: the session ``timeout``), in whole seconds;
PostgreSQL's advisory lock has none (it lasts as long as its connection). No driver gives
a fencing token. ``still_held`` is ``is_still_owner()`` where the driver has it (ZooKeeper,
Redis); the others raise ``tooz.NotImplemented``: it cannot tell.

Two drivers raise, rather than answer False, when ``blocking=wait`` runs out (etcd3gw and
PostgreSQL retry a try-lock under tenacity, which ends with ``tenacity.RetryError``): that
is their "not granted in ``wait`` s", and is taken as such.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlencode

from workloads.lock.own import Held, LockLost

Url = Callable[[Sequence[str], Mapping[str, Any]], str]
"""A driver's coordinator URL, from the endpoints and the run's settings."""


def _seconds(value: Any) -> int:
    """Whole seconds, as the drivers parse their timeouts (``int(...)``), at least 1."""
    return max(1, round(float(value)))


class ToozLock:
    """A tooz coordinator of one client worker, and the locks it takes."""

    def __init__(self, url: str, member: str) -> None:
        import tenacity  # the library's environment's, on the worker's path by now
        import tooz
        from tooz import coordination

        self.not_implemented, self.ran_out = tooz.NotImplemented, tenacity.RetryError
        self.coordinator = coordination.get_coordinator(url, member.encode())
        self.coordinator.start(start_heart=True)

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.coordinator.get_lock(name.encode())
        try:
            granted = lock.acquire(blocking=wait)
        except self.ran_out:  # etcd3gw, PostgreSQL: ``wait`` ran out
            return None
        return Held(None, lock) if granted else None

    def still_held(self, name: str, held: Held) -> bool | None:
        try:
            return bool(held.handle.is_still_owner())
        except self.not_implemented:
            return None

    def release(self, name: str, held: Held) -> None:
        if not held.handle.release():
            raise LockLost("tooz's release answered False: it no longer held the lock")

    def close(self) -> None:
        self.coordinator.stop()


def _zookeeper(endpoints: Sequence[str], settings: Mapping[str, Any]) -> str:
    """kazoo's client over every server, the worker's own first (``randomize_hosts``
    off), its session timeout the TTL."""
    query = {"timeout": _seconds(settings["ttl"]), "randomize_hosts": "false"}
    return f"kazoo://{','.join(endpoints)}?{urlencode(query)}"


def _redis(endpoints: Sequence[str], settings: Mapping[str, Any]) -> str:
    """The worker's server; the lock key's TTL ``lock_timeout``, the socket's the
    request timeout (which is also the membership key's TTL)."""
    query = {"lock_timeout": _seconds(settings["ttl"]), "timeout": _seconds(settings["timeout"])}
    return f"redis://{endpoints[0]}?{urlencode(query)}"


def _etcd3gw(endpoints: Sequence[str], settings: Mapping[str, Any]) -> str:
    """The worker's server's gRPC gateway; the lock's lease TTL ``lock_timeout``."""
    query = {"lock_timeout": _seconds(settings["ttl"]), "timeout": _seconds(settings["timeout"])}
    return f"etcd3+http://{endpoints[0]}?{urlencode(query)}"


POSTGRES_USER: Final = "postgres"
POSTGRES_DATABASE: Final = "postgres"


def _postgresql(endpoints: Sequence[str], settings: Mapping[str, Any]) -> str:
    """Every server (libpq takes lists of hosts and ports), the read-write one chosen by
    libpq's own ``PGTARGETSESSIONATTRS``: tooz's URL passes only host, port, user and
    database, and an advisory lock taken on a standby would be a lock of its own (so the
    library is ``spread``: which server a holder talks to is the primary, not its own)."""
    hosts = [address.rpartition(":") for address in endpoints]
    os.environ["PGTARGETSESSIONATTRS"] = "read-write"
    os.environ["PGCONNECT_TIMEOUT"] = str(max(2, _seconds(settings["timeout"])))
    query = {"host": ",".join(h for h, _, _ in hosts), "port": ",".join(p for _, _, p in hosts)}
    return f"postgresql://{POSTGRES_USER}@/{POSTGRES_DATABASE}?{urlencode(query)}"


def _maker(url: Url) -> Callable[[Sequence[str], Mapping[str, Any]], ToozLock]:
    def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> ToozLock:
        """The coordinator of one client worker."""
        return ToozLock(url(endpoints, settings), f"harness-{settings['client']}")

    return make


make_zookeeper = _maker(_zookeeper)
make_redis = _maker(_redis)
make_etcd3gw = _maker(_etcd3gw)
make_postgresql = _maker(_postgresql)
