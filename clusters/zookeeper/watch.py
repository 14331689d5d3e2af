"""ZooKeeper's one-shot data watches: a ``workloads.watch.WatchBackend``.

Nodes are ``/<prefix>/watch/<key>``; ``write`` is ``set`` (creating the node the first
time), its revision the node's ``mzxid`` (the zxid of the change, ordered across the
ensemble). ZooKeeper keeps no history of values: ``compact`` is refused.

A data watch fires once, for the next change after it was set, and carries no data (the
event says only which node changed); it must be set again, and changes between the event
and the new watch are never announced. ``follow`` sets one per key on the worker's session
and handles each event in its own thread (not kazoo's callback thread), in one of two
modes (``--watch-mode``):

- ``reread`` (kazoo's ``DataWatch`` does the same): ``get(path, watch=...)`` reads the
  value and sets the next watch in one request, so no later change can slip by unseen:
  intermediate changes coalesce, the last one is always seen;
- ``payload``: the event is taken as the change it announces, with the value of one plain
  ``get`` made for it, and the watch is set again afterwards by ``exists(path,
  watch=...)``, as a client that trusts what it was handed and only re-arms. A change
  between that read and the new watch is never announced: the watcher may settle on a
  stale value.

Events of one node are delivered with its ``mzxid``; a lost session (its watches gone)
ends ``follow``, and the client sets everything up again on a new session.

``service_record`` reads back ZooKeeper's own record of the keys once the run is over: no
history of values, but each node's last change (its data and ``stat``: the ``mzxid`` and
the ``version``, how many times its data was set), read through a ``sync`` so the server
answering is up to date with the leader.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Sequence
from typing import Any

from kazoo.client import KazooState
from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent

from clusters.zookeeper.errors import classified
from clusters.zookeeper.session import LongSession
from workloads.errors import OpFailed, OpUnknown
from workloads.watch import LATEST, Emit

MODES = ("reread", "payload")
MECHANISM = {
    "reread": "ZooKeeper one-shot data watch, re-read and re-set by get(watch=) after each event",
    "payload": "ZooKeeper one-shot data watch, taken with one get, re-set by exists(watch=)",
}
LOST = ""
"""What the session listener queues when the session expired (every watch is gone)."""


def _value(data: bytes) -> Any:
    return json.loads(data) if data else None


class ZkWatch(LongSession):
    """Writes and follows ``/<prefix>/watch/<key>``."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        mode: str = MODES[0],
    ) -> None:
        super().__init__(addresses, timeout=timeout, prefix=prefix)
        self.mode = mode

    def write(self, key: str, value: Any) -> int | None:
        zk, path = self.observer(), self.path("watch", key)
        data = json.dumps(value).encode()
        with classified(f"write of {path}"):
            try:
                return int(zk.set(path, data).mzxid)
            except NoNodeError:
                pass
            try:
                _, stat = zk.create(path, data, makepath=True, include_data=True)
                return int(stat.mzxid)
            except NodeExistsError:
                return int(zk.set(path, data).mzxid)

    def compact(self) -> int:
        raise OpFailed("ZooKeeper keeps no history of a node's values: nothing to compact")

    def service_record(self, keys: Sequence[str]) -> dict[str, Any]:
        """``workloads.watch.KeepsHistory``: each node's last change (see the module
        docstring)."""
        zk = self.observer()
        changes: list[list[Any]] = []
        versions: dict[str, int] = {}
        with classified("read of the keys' stat"):
            zk.sync(self.path("watch"))
            for key in keys:
                try:
                    data, stat = zk.get(self.path("watch", key))
                except NoNodeError:
                    continue
                changes.append([key, int(stat.mzxid), _value(data)])
                versions[key] = int(stat.version)
        return {
            "service": "ZooKeeper",
            "source": "each node's data and stat (mzxid, version), after a sync",
            "history": False,
            "first_revision": 0,
            "compact_revision": None,
            "revision": max((c[1] for c in changes), default=0),
            "complete": True,
            "changes": changes,
            "versions": versions,
        }

    def follow(self, keys: Sequence[str], emit: Emit, stop: threading.Event) -> None:
        emit(
            "subscribed",
            delivery=LATEST,
            rereads=self.mode == "reread",
            mechanism=MECHANISM[self.mode],
        )
        zk = self.observer()
        fired: queue.Queue[str] = queue.Queue()
        paths = {self.path("watch", k): k for k in keys}

        def on_event(event: WatchedEvent) -> None:
            fired.put(paths.get(event.path, LOST))

        def on_state(state: str) -> None:
            if state == KazooState.LOST:
                fired.put(LOST)

        zk.add_listener(on_state)
        last: dict[str, int] = {}
        for key in keys:
            with classified(f"create of {self.path('watch', key)}"):
                try:
                    zk.create(self.path("watch", key), b"", makepath=True)
                except NodeExistsError:
                    pass
            value, last[key] = self._read(key, on_event)
            emit("snapshot", key=key, value=value, revision=last[key])
        while not stop.is_set():
            try:
                key = fired.get(timeout=0.5)
            except queue.Empty:
                continue
            if key == LOST:
                raise OpUnknown("the session expired: its watches are gone")
            try:
                value, revision = self._read(key, on_event)
            except (OpFailed, OpUnknown):
                fired.put(key)  # not read, not re-armed: try again
                stop.wait(0.2)
                continue
            if revision != last[key]:
                last[key] = revision
                emit("change", key=key, value=value, revision=revision)

    def _read(self, key: str, on_event: Any) -> tuple[Any, int]:
        """The node's value and mzxid, and its watch set again, as the mode says."""
        zk, path = self.observer(), self.path("watch", key)
        with classified(f"read of {path}"):
            if self.mode == "reread":
                data, stat = zk.get(path, watch=on_event)
            else:
                data, stat = zk.get(path)
                zk.exists(path, watch=on_event)
        return _value(data), int(stat.mzxid)
