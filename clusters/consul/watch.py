"""Consul's blocking queries on the keys' index: a ``workloads.watch.WatchBackend``.

Keys are ``<prefix>/watch/<key>``; ``write`` is a PUT (Consul answers ``true``, no index:
the revision of a write is the ``ModifyIndex`` a watcher reports). Consul's KV keeps no
history of values: ``compact`` is refused.

``follow`` reads the keys' folder (``?recurse&consistent``: every entry with its
``ModifyIndex``, answered by a leader that first checks it still leads, so a server cut
off from the others cannot hand out its old state; and
the ``X-Consul-Index`` to block on), then repeats the blocking query ``?index=N&wait=...``
on it, as Consul's own watches do: the query returns when the folder's index moves past N
(or the wait ends) with the current entries, and each key whose ``ModifyIndex`` moved is
delivered as a change. It returns the current state, not the changes in between: several
writes to a key between two answers coalesce into the last one. An index that goes back
(another server answered, a snapshot restore) restarts from 0, as Consul's documentation
says; a query that fails is retried on the next server, and reported ``resumed`` once one
answers.

``service_record`` reads back Consul's own record of the keys once the run is over: no
history of values, but each entry's last change (its value and ``ModifyIndex``), read
``consistent``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from clusters.consul.api import ConsulConnection, decode, encode
from workloads.errors import OpFailed, OpUnknown
from workloads.watch import LATEST, Emit, following

WAIT_S = 2.0
"""Seconds one blocking query may wait on the server."""
RETRY_S = 0.5
MECHANISM = "Consul blocking query on the keys' folder (?recurse&consistent&index=N&wait=)"


class ConsulWatch(ConsulConnection):
    """Writes and follows ``<prefix>/watch/<key>``."""

    @property
    def folder(self) -> str:
        return self.key("watch") + "/"

    def write(self, key: str, value: Any) -> int | None:
        k = self.folder + key
        self.call("PUT", f"/kv/{k}", f"write of {k}", data=encode(value))
        return None

    def compact(self) -> int:
        raise OpFailed("Consul's KV store keeps no history of values: nothing to compact")

    def service_record(self, keys: Sequence[str]) -> dict[str, Any]:
        """``workloads.watch.KeepsHistory``: each entry's last change (see the module
        docstring)."""
        got, index = self._query(0)
        return {
            "service": "Consul",
            "source": "each entry's value and ModifyIndex, read consistent",
            "history": False,
            "first_revision": 0,
            "compact_revision": None,
            "revision": index,
            "complete": True,
            "changes": [[k, got[k][1], got[k][0]] for k in keys if k in got],
        }

    def _move_on(self) -> None:
        self.address = following(self.addresses, self.address)

    def _query(self, index: int) -> tuple[dict[str, tuple[Any, int]], int]:
        """The folder's entries (key -> value, ModifyIndex) and its index, blocking while
        the index is still ``index`` (0: at once)."""
        params: dict[str, Any] = {"recurse": "", "consistent": ""}
        if index:
            params.update(index=index, wait=f"{round(WAIT_S * 1000)}ms")
        r = self.call(
            "GET", f"/kv/{self.folder}", f"query of {self.folder}", params=params,
            allow=(404,), timeout=WAIT_S + self.timeout,
        )  # fmt: skip
        entries = [] if r.status == 404 else r.json()
        got = {
            e["Key"].removeprefix(self.folder): (decode(e), int(e["ModifyIndex"])) for e in entries
        }
        return got, int(r.headers.get("X-Consul-Index", 0))

    def follow(self, keys: Sequence[str], emit: Emit, stop: threading.Event) -> None:
        emit("subscribed", delivery=LATEST, rereads=True, mechanism=MECHANISM)
        got, index = self._query(0)
        seen = {k: got.get(k, (None, 0))[1] for k in keys}
        for key in keys:
            emit("snapshot", key=key, value=got.get(key, (None, 0))[0], revision=seen[key])
        broken: str | None = None
        while not stop.is_set():
            try:
                got, new = self._query(index)
            except (OpFailed, OpUnknown) as e:
                broken = broken or str(e)
                self._move_on()
                stop.wait(RETRY_S)
                continue
            if broken is not None:
                emit("resumed", revision=index, error=broken, node=self.address)
                broken = None
            index = new if new >= index else 0
            for key in keys:
                value, modified = got.get(key, (None, 0))
                if modified > seen[key]:
                    seen[key] = modified
                    emit("change", key=key, value=value, revision=modified)
