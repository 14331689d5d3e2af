"""The herd workload's backend on the sim service (``workloads.herd.HerdBackend``).

- naive: ``lock_try``, and while another holds the lock ``lock_watch`` until it is freed,
  then try again: every watcher of the lock is woken by each release;
- queue: ``lock_acquire``, the service's own FIFO queue: the grant is the one notification
  a waiter gets, and only a waiter that was queued gets one.

Each request is counted under its op, as the service's own counters (its ``served`` op)
count it: ``server_counters`` reads them (``workloads.herd.CountsRequests``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from checkers.refusals import NOT_GRANTED
from clusters.sim.client import SimClient
from workloads.errors import OpFailed
from workloads.herd import Tally

COUNTED: Final = ("lock_try", "lock_watch", "lock_acquire")
"""The ops the herd's acquires send."""


class SimHerd(SimClient):
    """A ``HerdBackend`` on the sim service at ``addresses[0]`` (the one node)."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        super().__init__(addresses[0], timeout)
        self._node = addresses[0]

    def server_counters(self) -> dict[str, Any]:
        """``workloads.herd.CountsRequests``: the service's requests served, per op."""
        counts = self.call("served")["counts"]
        return {
            "service": "sim",
            "source": "its requests served per op",
            "nodes": {self._node: {op: int(counts.get(op, 0)) for op in COUNTED}},
            "covers": {op: [op] for op in COUNTED},
            "errors": {},
        }

    def acquire_naive(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        deadline = time.monotonic() + wait
        while True:
            tally.request("lock_try")
            r = self.call("lock_try", name=name, lease=lease)
            if r["token"] is not None:
                return int(r["token"])
            tally.failed()
            left = deadline - time.monotonic()
            if left <= 0:
                raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {wait:g} s")
            tally.request("lock_watch")
            args = {"name": name, "held_by": r["held_by"], "wait": left}
            if self.call("lock_watch", timeout=left + self.timeout, **args)["notified"]:
                tally.notified(f"lock {name} freed")

    def acquire_queue(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        tally.request("lock_acquire")
        timeout = wait + self.timeout
        r = self.call("lock_acquire", timeout=timeout, name=name, lease=lease, wait=wait)
        if r.get("queued"):
            tally.failed()
            tally.notified(f"lock {name} granted from the queue")
        return int(r["token"])
