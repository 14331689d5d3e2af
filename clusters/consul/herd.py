"""The herd workload's backend on Consul (``workloads.herd.HerdBackend``): naive only.

- naive: Consul's own lock recipe (``clusters.consul.lock``): try ``?acquire=`` with the
  holding's session, and while another session holds the key wait with a blocking query
  on the key for its next change, then try again. Every waiter blocks on the same key, so
  each change of it (a release, and the next acquire) answers them all.
- queue: Consul has none. Its semaphore (``consul lock -n``, the API's ``Semaphore``)
  has every contender block on the whole prefix of contender keys and the ``.lock`` key,
  so every change wakes all of them, as the lock does; Consul offers no ordering of
  waiters to watch a predecessor by. The run is refused (``clusters.consul.spec.NO_QUEUE``).

A blocking query that returns with a higher index is a notification (counted in the
acquire's ``Tally``, never trusted: the waiter re-reads); one that returns at its wait's
end with the same index is not. Token: the key's LockIndex.
"""

from __future__ import annotations

import time

from clusters.consul.lock import NOT_GRANTED, ConsulHold
from clusters.consul.spec import NO_QUEUE
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed
from workloads.herd import QUEUE, Tally


class ConsulHerd(ConsulHold):
    """A ``HerdBackend`` on one Consul agent (naive recipe only)."""

    kind = "herd"

    def acquire_naive(self, name: str, lease: str, wait: float, tally: Tally) -> int:
        key = self.key(self.kind, name)
        deadline = time.monotonic() + wait
        while True:
            tally.request("kv put")
            tally.request("kv get")
            r = self.call("PUT", f"/kv/{key}", f"acquire {key}", params={"acquire": lease})
            entry, index = self.entry(key)
            if r.json() is True:
                if entry is None or entry.get("Session") != lease:
                    raise LeaseNotFound(f"acquire {key}: granted, then lost at once")
                return int(entry["LockIndex"])
            tally.failed()
            left = deadline - time.monotonic()
            if left <= 0:
                raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {wait:g} s")
            if entry is not None and entry.get("Session"):
                tally.request("kv get (blocking)")
                self._notified(key, index, left, tally)

    def acquire_queue(self, name: str, lease: str, wait: float, tally: Tally) -> int:
        raise OpFailed(f"{NOT_GRANTED}: {NO_QUEUE[QUEUE]}")

    def release(self, name: str, lease: str) -> None:
        self.give_up(name, lease)

    def _notified(self, key: str, index: int, seconds: float, tally: Tally) -> None:
        """A blocking query on ``key`` from ``index``: a notification when it answers
        with a higher index."""
        answered = self.wait_change(key, index, seconds)
        if answered is not None and answered > index:
            tally.notified(f"index of {key} moved past {index}")
