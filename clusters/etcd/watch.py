"""etcd's watch from a revision: a ``workloads.watch.WatchBackend``.

Keys are ``<prefix>/watch/<key>``. ``write`` is a put; its revision is the answer's
header revision (the put's own). ``compact`` compacts at the current revision.

``follow`` reads every key (one range over the prefix: the values and the store revision
R), then watches the prefix from R + 1 through the gateway's ``/v3/watch`` stream. Every
event is delivered as a change at its ``mod_revision``; each stream is re-opened every
``STREAM_S`` seconds, and whenever it breaks (a killed member, a partition that ends the
connection) the watch moves to the next member and resumes from the last revision seen + 1,
as etcd's own client does: nothing in between is lost unless etcd compacted it. A watch
cancelled because its start revision was compacted (``compact_revision`` in the answer,
etcd's ``ErrCompacted``) is reported as ``compacted``; the keys are read again and the
watch starts over from that read's revision + 1.

``service_record`` reads back etcd's own record of the keys once the run is over: its MVCC
history of the prefix, replayed by a watch from revision 1 (or, once compacted, from its
compaction revision, the oldest it keeps) up to the keys' last change, each change with
its ``mod_revision``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from clusters.etcd.gateway import EtcdConnection, b64, decode, encode, prefix_end, unb64
from workloads.errors import OpFailed, OpUnknown
from workloads.watch import EVERY_CHANGE, Emit, following

STREAM_S = 5.0
"""Seconds one watch stream stays open before it is re-opened from the next revision."""
RETRY_S = 0.5
"""Seconds to wait after a broken stream before the next member is tried."""
RECORD_S = 1.5
"""Seconds the read of etcd's record may take (it is read while the worker closes)."""
MECHANISM = "etcd watch from a revision (v3 gateway /v3/watch), resumed from the last seen + 1"


class EtcdWatch(EtcdConnection):
    """Writes and follows ``<prefix>/watch/<key>``."""

    @property
    def folder(self) -> str:
        return self.key("watch") + "/"

    def write(self, key: str, value: Any) -> int | None:
        k = self.folder + key
        r = self.call("/v3/kv/put", {"key": b64(k), "value": encode(value)}, f"write of {k}")
        return int(r["header"]["revision"])

    def compact(self) -> int:
        r = self.call("/v3/kv/range", {"key": b64(self.folder)}, "read of the revision")
        revision = int(r["header"]["revision"])
        self.call("/v3/kv/compaction", {"revision": revision}, f"compaction at {revision}")
        return revision

    def service_record(self, keys: Sequence[str]) -> dict[str, Any]:
        """``workloads.watch.KeepsHistory``: etcd's history of the keys (see the module
        docstring)."""
        deadline = time.monotonic() + RECORD_S
        body = {"key": b64(self.folder), "range_end": prefix_end(self.folder)}
        r = self.call("/v3/kv/range", body, "read of the keys' last revisions", RECORD_S)
        last = max((int(kv["mod_revision"]) for kv in r.get("kvs", [])), default=0)
        first, compacted = 1, None
        changes, complete = self._replay(first, last, deadline)
        if isinstance(changes, int):  # compacted: replay from the oldest revision it keeps
            first = compacted = changes
            changes, complete = self._replay(first, last, deadline)
        return {
            "service": "etcd",
            "source": "its MVCC history, replayed by a watch",
            "history": True,
            "first_revision": first,
            "compact_revision": compacted,
            "revision": int(r["header"]["revision"]),
            "complete": complete,
            "changes": changes if isinstance(changes, list) else [],
        }

    def _replay(self, start: int, last: int, deadline: float) -> tuple[list[Any] | int, bool]:
        """The changes etcd holds from revision ``start`` up to ``last`` (a watch replays
        its history), and whether it got to ``last``; the compaction revision (an int)
        when ``start`` is compacted away."""
        changes: list[Any] = []
        done = last < start
        create = {"key": b64(self.folder), "range_end": prefix_end(self.folder)}
        watch = {"create_request": {**create, "start_revision": start}}
        left = max(0.1, deadline - time.monotonic())
        for message in self.stream("/v3/watch", watch, "replay of the history", left):
            compacted = int(message.get("compact_revision", 0) or 0)
            if compacted:
                return compacted, False
            for event in message.get("events", []):
                kv = event["kv"]
                revision = int(kv["mod_revision"])
                value = None if event.get("type") == "DELETE" else decode(kv)
                changes.append([unb64(kv["key"]).removeprefix(self.folder), revision, value])
                done = done or revision >= last
            if done:
                break
        return changes, done

    def _move_on(self) -> None:
        """Talk to the next member from now on."""
        self.address = following(self.addresses, self.address)

    def _snapshot(self, keys: Sequence[str], emit: Emit) -> int:
        body = {"key": b64(self.folder), "range_end": prefix_end(self.folder)}
        r = self.call("/v3/kv/range", body, f"read of {self.folder}")
        revision = int(r["header"]["revision"])
        kvs = {unb64(kv["key"]).removeprefix(self.folder): kv for kv in r.get("kvs", [])}
        for key in keys:
            kv = kvs.get(key)
            value, modified = (decode(kv), int(kv["mod_revision"])) if kv else (None, 0)
            emit("snapshot", key=key, value=value, revision=revision, modified=modified)
        return revision

    def follow(self, keys: Sequence[str], emit: Emit, stop: threading.Event) -> None:
        emit("subscribed", delivery=EVERY_CHANGE, rereads=False, mechanism=MECHANISM)
        self._last: int | None = None
        """The last revision delivered (None: the keys are to be read first); kept
        across broken streams, so a resumed watch starts right after it."""
        self._broken: str | None = None
        while not stop.is_set():
            try:
                if self._last is None:
                    self._last = self._snapshot(keys, emit)
                self._stream(self._last, emit, stop)
            except (OpFailed, OpUnknown) as e:
                self._broken = self._broken or str(e)
                self._move_on()
                stop.wait(RETRY_S)

    def _stream(self, start: int, emit: Emit, stop: threading.Event) -> None:
        """One watch stream from ``start`` + 1, each change recorded in ``_last`` as it
        is delivered; ``_last`` None when the watch was compacted away (the caller reads
        the keys again)."""
        create = {
            "key": b64(self.folder),
            "range_end": prefix_end(self.folder),
            "start_revision": start + 1,
        }
        for message in self.stream("/v3/watch", {"create_request": create}, "watch", STREAM_S):
            if self._broken is not None:
                emit("resumed", revision=start + 1, error=self._broken, node=self.address)
                self._broken = None
            compacted = int(message.get("compact_revision", 0) or 0)
            if compacted:
                emit("compacted", revision=compacted, node=self.address)
                self._last = None
                return
            for event in message.get("events", []):
                kv = event["kv"]
                key = unb64(kv["key"]).removeprefix(self.folder)
                value = None if event.get("type") == "DELETE" else decode(kv)
                self._last = max(self._last or 0, int(kv["mod_revision"]))
                emit("change", key=key, value=value, revision=int(kv["mod_revision"]))
            if stop.is_set():
                return
