"""etcd's two lock implementations, both ``workloads.lock.LockBackend``s on a lease.

``lease-lock`` (``ServiceLock``, the default): etcd's own lock service, ``/v3/lock/lock``
with the holding's lease and ``/v3/lock/unlock``. The service creates the key
``<name>/<lease in hex>`` and answers once every key created before it under ``<name>/`` is
gone. Token: the lock key's **create revision**, read back with one linearizable range
right after the grant. (The grant's header revision would also increase from holder to
holder, but it is the store's revision at answer time, not a property of the lock; the
create revision is what orders contenders and what the ``recipe`` uses, so both
implementations hand out comparable tokens.)

``recipe`` (``RecipeLock``): the same protocol done by the client, as etcd's
``concurrency.Mutex`` does: create ``<name>/<lease hex>`` under the lease unless it exists,
then until it is the oldest key under the prefix, watch only its predecessor (the newest
older key) and re-read after every watch event (a watch is a one-shot notification; the
event itself is never trusted). Token: its own create revision.

Both: ``acquire`` blocks up to ``wait`` s. When the recipe's wait runs out, one range
settles it: if the client's key is by then the oldest it holds the lock (ok), else ``not
granted`` (fail; the holder then revokes the lease, which deletes the key, so it never will
be). The lock service's wait is the request's own, and no read settles it: etcd deletes the
key of a lock request that is cancelled while it waits (``concurrency.Mutex.Lock``
releases it when its wait fails), so a key seen as the oldest after the client gave up
may be gone a moment later, and another client granted the lock. The outcome is unknown
(info: the service may have granted it just before the cancel), and the holder revokes the
lease, which ends it either way.
``release`` deletes the key and revokes the lease; ``LeaseNotFound`` (fail) when etcd says
the lease was already gone (the key went with it: the release did nothing).
"""

from __future__ import annotations

import time
from typing import Any

from checkers.refusals import NOT_GRANTED
from clusters.etcd.gateway import EtcdConnection, b64, prefix_end, revision, unb64
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

CANCELLED = "etcd drops the key of a request cancelled while it waits, unless it was granted"
RETRY_PAUSE = 0.1
"""Seconds to pause after a failed watch before re-reading."""


def lock_key(name: str, lease: int) -> str:
    """The key etcd's lock service (and the recipe) creates for ``lease``."""
    return f"{name}/{lease:x}"


class _EtcdLock(EtcdConnection):
    """What both implementations share: the key layout, the owner check and release."""

    kind = "?"

    def lock_name(self, name: str) -> str:
        return self.key(self.kind, name)

    def oldest(self, name: str) -> dict[str, Any] | None:
        """The oldest key under lock ``name`` (the holder), None when there is none."""
        prefix = self.lock_name(name) + "/"
        r = self.call(
            "/v3/kv/range",
            {
                "key": b64(prefix),
                "range_end": prefix_end(prefix),
                "limit": 1,
                "sort_order": "ASCEND",
                "sort_target": "CREATE",
            },
            f"owner of {prefix}",
        )
        kvs = r.get("kvs", [])
        return kvs[0] if kvs else None

    def owner_check(self, name: str, lease: int, cause: OpFailed | OpUnknown) -> int:
        """After a wait ran out (``cause``): the token if ``lease`` holds the lock now,
        else a definite ``not granted``."""
        owner = self.oldest(name)
        mine = lock_key(self.lock_name(name), lease)
        if owner is not None and unb64(owner["key"]) == mine:
            return revision(owner)
        raise OpFailed(f"{NOT_GRANTED}: {name} still held by another ({cause})")

    def release(self, name: str, lease: int) -> None:
        """Delete the lock key, then revoke the lease (``LeaseNotFound`` if already gone)."""
        self.delete_key(lock_key(self.lock_name(name), lease))
        try:
            self.revoke(lease)
        except LeaseNotFound as e:
            raise LeaseNotFound(
                f"release of {name}: the lease had expired, and its lock key with it ({e})"
            ) from None

    def delete_key(self, key: str) -> None:
        raise NotImplementedError


class ServiceLock(_EtcdLock):
    """etcd's lock service (``/v3/lock``)."""

    kind = "lock"

    def acquire(self, name: str, lease: int, wait: float) -> int:
        lock = self.lock_name(name)
        try:
            r = self.call(
                "/v3/lock/lock", {"name": b64(lock), "lease": lease}, f"lock {name}", timeout=wait
            )
        except OpUnknown as e:
            raise OpUnknown(f"lock {name}: {e}; {CANCELLED}") from None
        key = unb64(r["key"])
        kv = self.get(key)
        if kv is None:
            raise OpUnknown(f"lock {name}: granted, but key {key} was already gone")
        return revision(kv)

    def delete_key(self, key: str) -> None:
        self.call("/v3/lock/unlock", {"key": b64(key)}, f"unlock {key}")


class RecipeLock(_EtcdLock):
    """The client-side recipe: create revision order, watch the predecessor only."""

    kind = "recipe"

    def acquire(self, name: str, lease: int, wait: float) -> int:
        deadline = time.monotonic() + wait
        mine = lock_key(self.lock_name(name), lease)
        my_rev = self._create(mine, lease)
        while True:
            exists, predecessor, rev = self._predecessor(name, mine, my_rev)
            if not exists:
                raise LeaseNotFound(
                    f"lock {name}: own key {mine} vanished while waiting (the lease expired)"
                )
            if predecessor is None:
                return my_rev
            left = deadline - time.monotonic()
            if left <= 0:
                return self.owner_check(name, lease, OpFailed(f"waited {wait:g} s"))
            self._wait_change(predecessor, rev + 1, left)

    def _create(self, key: str, lease: int) -> int:
        """Create ``key`` under ``lease`` unless it exists; its create revision."""
        r = self.txn(
            [{"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": 0}],
            [{"request_put": {"key": b64(key), "value": "", "lease": lease}}],
            [{"request_range": {"key": b64(key)}}],
            f"create {key}",
        )
        if r.get("succeeded"):
            return revision(r["header"], "revision")
        kvs = r["responses"][0]["response_range"].get("kvs", [])
        if not kvs:
            raise OpUnknown(f"create {key}: it existed, then vanished")
        return revision(kvs[0])

    def _predecessor(self, name: str, mine: str, my_rev: int) -> tuple[bool, str | None, int]:
        """(own key still exists, the newest key created before it or None, revision)."""
        prefix = self.lock_name(name) + "/"
        r = self.txn(
            [],
            [
                {"request_range": {"key": b64(mine)}},
                {
                    "request_range": {
                        "key": b64(prefix),
                        "range_end": prefix_end(prefix),
                        "max_create_revision": my_rev - 1,
                        "limit": 1,
                        "sort_order": "DESCEND",
                        "sort_target": "CREATE",
                    }
                },
            ],
            [],
            f"predecessor of {mine}",
        )
        own, before = (x["response_range"].get("kvs", []) for x in r["responses"])
        pred = unb64(before[0]["key"]) if before else None
        return bool(own), pred, revision(r["header"], "revision")

    def _wait_change(self, key: str, start: int, timeout: float) -> None:
        """Return at the first change of ``key`` from revision ``start`` on, or after
        ``timeout`` s; a notification only: the caller re-reads. A watch that fails is
        no answer either way: pause briefly and let the caller re-read."""
        watch = {"create_request": {"key": b64(key), "start_revision": start}}
        try:
            for result in self.stream("/v3/watch", watch, f"watch {key}", timeout):
                if result.get("events") or result.get("canceled") or result.get("compact_revision"):
                    return
        except (OpFailed, OpUnknown):
            time.sleep(min(timeout, RETRY_PAUSE))

    def delete_key(self, key: str) -> None:
        self.call("/v3/kv/deleterange", {"key": b64(key)}, f"delete {key}")
