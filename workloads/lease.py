"""Client-side leases: a lease kept alive from a background thread, and the client event log.

This is the part of a lock or election client that a GC pause freezes along with the rest
of the worker process. The keeper thread renews the lease every ``interval`` seconds and
records each acknowledgement; it declares the lease lost when the service says it no longer
exists, or when no renewal has been acknowledged for a whole TTL (measured from the send
time of the last acknowledged renewal, the earliest the service can have expired it).

A frozen process notices nothing: when it wakes, its main thread carries on with whatever it
was doing (typically writing to the protected resource) before the keeper has had a round
trip to find out the lease is gone. That is the realistic failure the lock workload
exists to show; do not add a local clock check to the write path to hide it.

Client events (JSON Lines in ``WorkerContext.events_path``), one object per line::

    {"time": NS, "process": P, "event": "lease-granted" | "keepalive" | "lease-lost",
     "lease": ID, "ttl": S, "lock": NAME, "sent": NS, "reason": TEXT}

``time`` is when the client learnt it (on the run clock); ``sent`` (grants and keepalives)
is when the request left; ``reason`` only on ``lease-lost``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from harness.client import WorkerContext
from harness.clock import ns
from harness.store import JsonlWriter
from workloads.errors import OpFailed, OpUnknown


class LeaseNotFound(OpFailed):
    """The service says the lease does not exist (expired or revoked)."""


class EventLog:
    """Appends this process's client events to the run's events file (or nowhere).

    Many worker processes append to one file: each line is a single unbuffered
    ``O_APPEND`` write, so lines never interleave.
    """

    def __init__(self, ctx: WorkerContext) -> None:
        self.ctx = ctx
        self._out = JsonlWriter(ctx.events_path) if ctx.events_path is not None else None
        self._lock = threading.Lock()

    def record(self, event: str, **fields: Any) -> None:
        if self._out is None:
            return
        line = {"time": self.ctx.clock.now(), "process": self.ctx.process, "event": event}
        line.update(fields)
        with self._lock:
            self._out.append(line)

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


class LeaseKeeper(threading.Thread):
    """Renews one lease every ``interval`` seconds until stopped or the lease is lost."""

    def __init__(
        self,
        lease: int,
        ttl: float,
        interval: float,
        keepalive: Callable[[int], Any],
        events: EventLog,
        name: str,
        granted_sent: int,
    ) -> None:
        super().__init__(name=f"keepalive-{lease}", daemon=True)
        self.lease, self.ttl, self.interval = lease, ttl, interval
        self._keepalive = keepalive
        self._events = events
        self._name = name
        self._clock = events.ctx.clock
        self._last_sent = granted_sent
        self._stop_event = threading.Event()
        self._lost = threading.Event()
        self._mark = threading.Lock()

    @property
    def lost(self) -> bool:
        """True once this thread has noticed the lease is gone."""
        return self._lost.is_set()

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=self.interval + 10)

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            sent = self._clock.now()
            try:
                self._keepalive(self.lease)
            except LeaseNotFound:
                self._lose("the service no longer knows the lease")
                return
            except (OpFailed, OpUnknown) as e:
                if self._clock.now() >= self._last_sent + ns(self.ttl):
                    self._lose(f"no keepalive acknowledged within the ttl (last error: {e})")
                    return
                continue
            if self._stop_event.is_set():
                return  # stopped while renewing: the lease may already be revoked
            self._last_sent = sent
            self._events.record(
                "keepalive", lease=self.lease, ttl=self.ttl, lock=self._name, sent=sent
            )

    def _lose(self, reason: str) -> None:
        if self._stop_event.is_set():
            return  # a deliberate end (release, revoke) is not a loss
        self.mark_lost(reason)

    def mark_lost(self, reason: str) -> None:
        """Record that the lease is gone (once, whichever thread learns it first)."""
        with self._mark:
            if self._lost.is_set():
                return
            self._lost.set()
        self._events.record(
            "lease-lost", lease=self.lease, ttl=self.ttl, lock=self._name, reason=reason
        )


class LeaseBackend(Protocol):
    """The lease half of a coordination service's driver (blocking, one connection)."""

    def grant_lease(self, ttl: float) -> int: ...

    def keepalive(self, lease: int) -> float: ...

    def revoke(self, lease: int) -> None: ...

    def close(self) -> None: ...


class LeaseSession:
    """A granted lease and its keeper: what backs one lock holding or one leadership."""

    def __init__(
        self,
        backend: LeaseBackend,
        connect: Callable[[], LeaseBackend],
        ttl: float,
        interval: float,
        events: EventLog,
        name: str,
    ) -> None:
        """Grant a lease of ``ttl`` seconds through ``backend`` (may raise ``OpFailed`` or
        ``OpUnknown``), record it and start renewing it every ``interval`` seconds on a
        connection of its own (``connect()``: the keeper runs on another thread)."""
        sent = events.ctx.clock.now()
        self.lease = backend.grant_lease(ttl)
        self.ttl = ttl
        self._backend = backend
        events.record("lease-granted", lease=self.lease, ttl=ttl, lock=name, sent=sent)
        self._keeper_conn = connect()
        self.keeper = LeaseKeeper(
            self.lease, ttl, interval, self._keeper_conn.keepalive, events, name, sent
        )
        self.keeper.start()

    @property
    def lost(self) -> bool:
        """True once the keeper has noticed the lease is gone."""
        return self.keeper.lost

    def end(self) -> None:
        """Stop renewing and revoke the lease, best effort: a revoke that fails leaves a
        lease that simply expires."""
        self.keeper.stop()
        self._keeper_conn.close()
        try:
            self._backend.revoke(self.lease)
        except (OpFailed, OpUnknown):
            pass
