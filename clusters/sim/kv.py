"""The sim service's watch primitive: a revisioned key-value store in etcd's style.

Every put gets the next revision of one counter; a watcher asks for the changes of some
keys from a revision on and waits (a long poll: the sim's wire is one request, one
answer) until there is one or its wait ends. The store keeps every change since its last
compaction; a watch from before it is refused with ``compacted: <revision>`` (the caller
re-reads the keys and watches again from the read's revision + 1), as etcd's watch is
cancelled with ``ErrCompacted``. With a write-ahead log, puts and compactions are logged
before the answer and replayed on restart, like the rest of the sim's state.

==================  ===========================  =======================================
op                  arguments                    result / refusals
==================  ===========================  =======================================
kv_put              key, value                   {revision}
kv_get              keys                         {revision, kvs: {key: [value, modified]}}
kv_watch            keys, start, wait (s)        {revision, events: [[key, value, rev]]};
                                                 "compacted: <revision>"
kv_compact                                       {revision}
==================  ===========================  =======================================
"""

from __future__ import annotations

import asyncio
from typing import Any

from clusters.sim.wal import WriteAheadLog
from workloads.common.wire import RequestError


class KvStore:
    """See the module docstring."""

    def __init__(self, wal: WriteAheadLog | None = None) -> None:
        self.revision = 0
        self.compacted = 0
        self._changes: list[tuple[int, str, Any]] = []
        self._latest: dict[str, tuple[Any, int]] = {}
        self._changed = asyncio.Event()
        self._wal = wal
        if wal is not None:
            for rec in wal.records():
                self._apply(rec)

    def _commit(self, rec: dict[str, Any]) -> None:
        if self._wal is not None:
            self._wal.append(rec)
        self._apply(rec)

    def _apply(self, rec: dict[str, Any]) -> None:
        if rec.get("t") == "kv":
            self.revision += 1
            self._changes.append((self.revision, rec["key"], rec["value"]))
            self._latest[rec["key"]] = (rec["value"], self.revision)
            self._changed.set()
            self._changed = asyncio.Event()
        elif rec.get("t") == "kv-compact":
            self.compacted = max(self.compacted, rec["revision"])
            self._changes = [c for c in self._changes if c[0] >= self.compacted]

    def put(self, key: str, value: Any) -> dict[str, Any]:
        self._commit({"t": "kv", "key": key, "value": value})
        return {"revision": self.revision}

    def get(self, keys: list[str]) -> dict[str, Any]:
        kvs = {k: list(self._latest.get(k, (None, 0))) for k in keys}
        return {"revision": self.revision, "kvs": kvs}

    def compact(self) -> dict[str, Any]:
        self._commit({"t": "kv-compact", "revision": self.revision})
        return {"revision": self.revision}

    async def watch(self, keys: list[str], start: int, wait: float) -> dict[str, Any]:
        wanted = set(keys)
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            if start < self.compacted:  # also when a compaction came while waiting
                raise RequestError(f"compacted: {self.compacted}")
            events = [[k, v, r] for r, k, v in self._changes if r >= start and k in wanted]
            left = deadline - asyncio.get_running_loop().time()
            if events or left <= 0:
                return {"revision": self.revision, "events": events}
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                pass
