"""The watch workload's client, for any target that can notify a client of a key's changes.

Operations (``Invocation.f``; ``Invocation.key`` names the key):

- ``write`` (value, unique per write) -> ok ``{"value": v, "revision": r}``, ``r`` the
  service's revision of the change where it gives one (else None);
- ``compact`` -> ok ``{"revision": r}``: the service drops its history before ``r``
  (``OpFailed`` where it keeps none);
- ``collect`` (value: seconds to wait) -> ok with the list of notifications the process's
  watch received since its last ``collect`` op, waiting up to that long for a first one.

A watcher process follows every key from its first ``collect`` op on, in a thread of its
own running the backend's ``follow`` on a connection of its own (a client pause freezes it
with the worker). Each notification is a dict stamped with the run-clock time the client
received it (``time``), one of these ``kind``\\ s:

- ``subscribed``: the watch is set up; ``delivery`` says what the mechanism promises
  (``every-change``: each committed change once, in revision order, as etcd's watch from a
  revision; ``latest``: the value after one or more changes, as a one-shot watch or a
  blocking query), ``rereads`` whether the value is read after each notification,
  ``mechanism`` in words;
- ``snapshot``: the key's value read at ``revision`` (the start, and after a compaction);
- ``change``: the key changed to ``value`` at ``revision``;
- ``compacted``: the service no longer has the history the watch needed (``revision``:
  the compaction's); a snapshot of every key follows, then changes from there;
- ``resumed``: the watch broke (``error``) and went on from the revision after the last
  one seen (``revision``), on ``node``;
- ``error``: the watch failed (``error``) and will be set up again.

At the end of the run (the client closing, once the faults are healed), the client of the
first thread reads back the service's own record of the keys where its backend keeps one
(``KeepsHistory``: etcd's history with its revisions) and records it as one
``service-record`` client event (``checkers.watch_record``), which the delivery checker
looks a finding up in before it blames anyone.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from checkers.watch_record import RECORD
from checkers.watch_streams import EVERY_CHANGE, LATEST
from core.client import Completion, Invocation, WorkerContext
from core.option_checks import DAY, MS, Bound
from core.option_records import option
from workloads.common.backoff import Backoff
from workloads.common.lease import EventLog

WATCH_MODES: Final = ("reread", "payload")
"""How a one-shot watch learns the value (``--watch-mode``)."""


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """The watch workload: the first ``watchers`` client threads follow the keys
    (``--keys``, ``workloads.register.RegisterOptions``), the others write them; ``mode``
    says how a one-shot watch learns the value; a compaction every ``compact_every``
    seconds (0: none) where the service keeps a history. ``opts.record(WatchOptions)``."""

    watchers: int = option(
        2,
        "client processes that watch the keys, the others write (default: %(default)s, "
        "or all clients but one)",
        bound=Bound("--watchers", 1, 1000, integer=True, unit="watchers"),
        shares="writer",
    )
    mode: str = option(
        WATCH_MODES[0],
        "one-shot watches (ZooKeeper): reread the node after each event, or take the "
        "value the event came with (default: %(default)s)",
        flat="watch_mode",
        choices=WATCH_MODES,
        named="mode",
    )
    compact_every: float = option(
        0.0,
        "seconds between compactions of the service's history (0: none)",
        bound=Bound("--compact-every", MS, DAY, zero=True),
    )


__all__ = ["EVERY_CHANGE", "LATEST", "Emit", "WatchBackend", "WatchClient", "following"]

Emit = Callable[..., None]
"""``emit(kind, **fields)``: hand one notification to the client (it adds the time)."""


class WatchBackend(Protocol):
    """A driver that writes keys and follows them with the service's own mechanism."""

    def write(self, key: str, value: Any) -> int | None:
        """Write ``value``; the change's revision where the service gives one."""
        ...

    def compact(self) -> int:
        """Drop the history before the current revision; that revision."""
        ...

    def follow(self, keys: Sequence[str], emit: Emit, stop: threading.Event) -> None:
        """Emit ``subscribed``, then notifications of ``keys`` until ``stop`` is set."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class KeepsHistory(Protocol):
    """An optional ability of a ``WatchBackend`` whose service keeps its own record of
    the keys' changes, with their revisions, that a client can read back."""

    def service_record(self, keys: Sequence[str]) -> dict[str, Any]:
        """Every change of ``keys`` the service still holds, as the fields of a
        ``service-record`` event (``checkers.watch_record``); quick: it is read while the
        worker closes."""
        ...


def following(addresses: Sequence[str], address: str) -> str:
    """The server after ``address`` in ``addresses`` (round the list): where a watch goes
    on when its server fails."""
    return addresses[(list(addresses).index(address) + 1) % len(addresses)]


class WatchClient:
    """One worker's watch client (``core.client.Client``): a writer or a watcher, as its
    operations say."""

    def __init__(
        self,
        ctx: WorkerContext,
        connect: Callable[[], WatchBackend],
        keys: int,
        node: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.connect = connect
        self.keys = [str(k) for k in range(keys)]
        self.node = node
        self.backoff = Backoff(seed=ctx.process)
        self._writer: WatchBackend | None = None
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == "collect":
            return self._watch(float(inv.value or 0.5))
        if inv.f == "write":
            return self.backoff.run(lambda: self._write(str(inv.key), inv.value), self.node)
        if inv.f == "compact":
            revision = self._backend().compact()
            return Completion("ok", {"revision": revision}, node=self.node)
        return Completion(
            "fail", error=f"unknown function {inv.f!r}; watch offers write, compact, collect"
        )

    def _backend(self) -> WatchBackend:
        if self._writer is None:
            self._writer = self.connect()
        return self._writer

    def _write(self, key: str, value: Any) -> Completion:
        revision = self._backend().write(key, value)
        return Completion("ok", {"value": value, "revision": revision}, node=self.node)

    def _emit(self, kind: str, **fields: Any) -> None:
        self._inbox.put({"kind": kind, "time": self.ctx.clock.now(), **fields})

    def _follow(self) -> None:
        while not self._stop.is_set():
            backend = self.connect()
            try:
                backend.follow(self.keys, self._emit, self._stop)
            except Exception as e:  # any failure is recorded, then the watch is set up again
                self._emit("error", error=f"{type(e).__name__}: {e}", node=self.node)
                self._stop.wait(0.5)
            finally:
                backend.close()

    def _watch(self, wait: float) -> Completion:
        if self._thread is None:
            self._thread = threading.Thread(target=self._follow, name="follow", daemon=True)
            self._thread.start()
        got: list[dict[str, Any]] = []
        try:
            got.append(self._inbox.get(timeout=wait))
        except queue.Empty:
            return Completion("ok", [], node=self.node)
        while True:
            try:
                got.append(self._inbox.get_nowait())
            except queue.Empty:
                return Completion("ok", got, node=self.node)

    def close(self) -> None:
        if self.ctx.slot == 0:  # one client reads the service's record, before it stops
            self._record_history()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._writer is not None:
            self._writer.close()

    def _record_history(self) -> None:
        """Record the service's own record of the keys (``KeepsHistory``), or why it
        could not be read; nothing for a backend without one."""
        try:
            backend = self._backend()
            if not isinstance(backend, KeepsHistory):
                return
            fields = backend.service_record(self.keys)
        except Exception as e:  # a record that cannot be read is said, never raised
            fields = {"error": f"{type(e).__name__}: {e}"}
        events = EventLog(self.ctx)
        try:
            events.record(RECORD, **fields)
        except OSError:
            pass
        finally:
            events.close()
