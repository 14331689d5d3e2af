"""The herd workload's backend on etcd (``workloads.herd.HerdBackend``), on a lease.

- naive: one key per lock, created under the holding's lease unless it exists (a txn on
  its create revision); while another holds it, watch that key for its deletion from the
  revision the try read, then try again: every waiter watches the same key, so each
  release wakes them all. Token: the key's create revision.
- queue: the client-side recipe of ``clusters.etcd.lock.RecipeLock``: a key per waiter
  under the lock's prefix, ordered by create revision; each watches only its predecessor
  (the newest older key) and re-reads after every event. Token: its own create revision.

Either way a watch event is a notification only (the waiter re-reads), and each one
delivered is counted in the acquire's ``Tally``, as are the requests and the tries or
checks that did not give the lock; each request is counted under the gRPC method etcd's
own counters give it (the gateway hands each to the member's gRPC server), and
``server_counters`` reads those counters (``workloads.herd.CountsRequests``). ``release``
deletes the holding's key only while it is still the lease's (a txn on the key's lease),
then revokes the lease.
"""

from __future__ import annotations

import time
from typing import Any

from clusters.etcd.gateway import b64, revision
from clusters.etcd.lock import NOT_GRANTED, RETRY_PAUSE, RecipeLock, lock_key
from clusters.etcd.metrics import RANGE, TXN, WATCH, request_counters
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown
from workloads.herd import Tally


class EtcdHerd(RecipeLock):
    """A ``HerdBackend`` on one etcd member."""

    kind = "herd"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._held: dict[tuple[str, int], str] = {}

    def acquire_naive(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        deadline = time.monotonic() + wait
        key = self.key("herd-naive", name)
        while True:
            tally.request(TXN)
            r = self.txn(
                [{"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": 0}],
                [{"request_put": {"key": b64(key), "value": "", "lease": lease}}],
                [{"request_range": {"key": b64(key)}}],
                f"try {key}",
            )
            if r.get("succeeded"):
                self._held[(name, lease)] = key
                return revision(r["header"], "revision")
            tally.failed()
            left = deadline - time.monotonic()
            if left <= 0:
                raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {wait:g} s")
            tally.request(WATCH)
            self._notified(key, revision(r["header"], "revision") + 1, left, tally)

    def acquire_queue(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        deadline = time.monotonic() + wait
        mine = lock_key(self.lock_name(name), lease)
        tally.request(TXN)
        my_rev = self._create(mine, lease)
        while True:
            tally.request(TXN)
            exists, predecessor, rev = self._predecessor(name, mine, my_rev)
            if not exists:
                raise LeaseNotFound(
                    f"lock {name}: own key {mine} vanished while waiting (the lease expired)"
                )
            if predecessor is None:
                self._held[(name, lease)] = mine
                return my_rev
            tally.failed()
            left = deadline - time.monotonic()
            if left <= 0:
                tally.request(RANGE)
                token = self.owner_check(name, lease, OpFailed(f"waited {wait:g} s"))
                self._held[(name, lease)] = mine
                return token
            tally.request(WATCH)
            self._notified(predecessor, rev + 1, left, tally)

    def _notified(self, key: str, start: int, timeout: float, tally: Tally) -> None:
        """Watch ``key`` for its deletion from revision ``start`` until an event, or
        ``timeout`` s; each event delivered is a notification. A watch that fails is no
        answer either way: pause briefly and let the caller re-read."""
        watch = {"create_request": {"key": b64(key), "start_revision": start, "filters": ["NOPUT"]}}
        try:
            for result in self.stream("/v3/watch", watch, f"watch {key}", timeout):
                events = result.get("events")
                if events:
                    kinds = ", ".join(str(e.get("type", "PUT")) for e in events)
                    tally.notified(f"{kinds} of {key}")
                    return
                if result.get("canceled") or result.get("compact_revision"):
                    return
        except (OpFailed, OpUnknown):
            time.sleep(min(timeout, RETRY_PAUSE))

    def server_counters(self) -> dict[str, Any]:
        """``workloads.herd.CountsRequests``: every member's gRPC request counters."""
        return request_counters(self.addresses, (TXN, RANGE, WATCH))

    def release(self, name: str, lease: int) -> None:
        """Delete the holding's key while it is still the lease's, then revoke the lease;
        ``LeaseNotFound`` when the key or the lease was already gone."""
        key = self._held.pop((name, lease), None)
        if key is None:
            raise LeaseNotFound(f"release of {name}: lease {lease:x} holds no key of it")
        r = self.txn(
            [{"key": b64(key), "target": "LEASE", "result": "EQUAL", "lease": lease}],
            [{"request_delete_range": {"key": b64(key)}}],
            [],
            f"delete {key}",
        )
        if not r.get("succeeded"):
            raise LeaseNotFound(f"release of {name}: {key} was no longer lease {lease:x}'s")
        self.revoke(lease)
