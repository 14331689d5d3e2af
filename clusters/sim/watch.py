"""The sim target's watch backend (``workloads.watch.WatchBackend``) on ``clusters.sim.kv``.

``follow`` reads every key (a snapshot at the store's revision R), then long-polls
``kv_watch`` from R + 1, each answer's changes delivered in revision order and the next
poll from the revision after the last one seen. While the server cannot be reached (a
kill, a pause) it retries with a short pause and, once answered again, says it
``resumed`` from where it was. A poll refused with ``compacted`` is reported, every key is
read again and watching resumes from that read's revision + 1.

``service_record`` reads back every change the store still holds (a watch from its
compaction revision that does not wait): the service's own record of the keys.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from clusters.sim.client import SimClient
from workloads.common.wire import Rejected
from workloads.errors import OpFailed, OpUnknown
from workloads.watch import EVERY_CHANGE, Emit

POLL_S = 1.0
"""Seconds one long poll waits on the server."""
RETRY_S = 0.2
"""Seconds to pause after a poll that got no answer."""


class SimWatch:
    """Writes and follows the sim service's revisioned keys."""

    def __init__(self, address: str, timeout: float = 5.0) -> None:
        self.timeout = timeout
        self._sim = SimClient(address, timeout)

    def call(self, op: str, timeout: float | None = None, **args: Any) -> Any:
        return self._sim.call(op, timeout, **args)

    def close(self) -> None:
        self._sim.close()

    def write(self, key: str, value: Any) -> int | None:
        return int(self.call("kv_put", key=key, value=value)["revision"])

    def compact(self) -> int:
        return int(self.call("kv_compact")["revision"])

    def service_record(self, keys: Sequence[str]) -> dict[str, Any]:
        """``workloads.watch.KeepsHistory``: every change of ``keys`` the store holds."""
        first = 1
        try:
            r = self.call("kv_watch", keys=list(keys), start=first, wait=0)
        except Rejected as e:
            if not str(e).startswith("compacted"):
                raise
            first = int(str(e).split(":")[1])
            r = self.call("kv_watch", keys=list(keys), start=first, wait=0)
        return {
            "service": "sim",
            "source": "its revisioned store's changes since its compaction",
            "history": True,
            "first_revision": first,
            "compact_revision": first if first > 1 else None,
            "revision": int(r["revision"]),
            "complete": True,
            "changes": [[key, revision, value] for key, value, revision in r["events"]],
        }

    def _snapshot(self, keys: Sequence[str], emit: Emit) -> int:
        r = self.call("kv_get", keys=list(keys))
        for key in keys:
            value, modified = r["kvs"][key]
            emit("snapshot", key=key, value=value, revision=r["revision"], modified=modified)
        return int(r["revision"])

    def follow(self, keys: Sequence[str], emit: Emit, stop: threading.Event) -> None:
        emit("subscribed", delivery=EVERY_CHANGE, rereads=False, mechanism="sim kv_watch")
        last = self._snapshot(keys, emit)
        broken: str | None = None
        while not stop.is_set():
            try:
                r = self.call(
                    "kv_watch",
                    timeout=POLL_S + self.timeout,
                    keys=list(keys),
                    start=last + 1,
                    wait=POLL_S,
                )
            except Rejected as e:
                if not str(e).startswith("compacted"):
                    raise
                emit("compacted", revision=int(str(e).split(":")[1]))
                last = self._snapshot(keys, emit)
                continue
            except (OpFailed, OpUnknown) as e:
                broken = str(e)
                stop.wait(RETRY_S)
                continue
            if broken is not None:
                emit("resumed", revision=last + 1, error=broken)
                broken = None
            for key, value, revision in r["events"]:
                emit("change", key=key, value=value, revision=revision)
                last = max(last, int(revision))
