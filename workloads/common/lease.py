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

    {"time": NS, "process": P,
     "event": "lease-granted" | "keepalive" | "keepalive-failed" | "lease-lost"
              | "lease-ended" | "session-state",
     "lease": ID, "ttl": S, "lock": NAME, "sent": NS, "reason": TEXT}

``time`` is when the client learnt it (on the run clock); ``sent`` (grants, keepalives
and ends) is when the request left; ``service_ttl`` (keepalives) the TTL the service
answered with, when it says one (etcd's lease TTL, ZooKeeper's negotiated session
timeout); ``reason`` on ``lease-lost`` (what showed the loss) and on ``lease-ended``, the
client letting the lease go (``released``; ``closed`` when its worker was stopped, at the
end of the run or after the runner abandoned it; ``not granted``). ``keepalive-failed``
(with ``error``): a renewal that got no answer, the first of a run of them, which is when
the holder could first have known something was wrong. ``session-state`` (with
``state``, and where the driver says, ``server`` and ``was``): what a driver reports of
its session's connection (ZooKeeper: ``SUSPENDED`` when the connection is lost,
``CONNECTED`` when it is back, with the node it is to now and the one it was to, ``LOST``
when the session expired); a ``CONNECTED`` to another server than it was is the session
moving.
From ``sent`` on the holder no longer acts on the holding, and the service may free it.

A *lease* here is whatever a holding is taken under and lapses unless renewed: an etcd
lease, a Consul session, a ZooKeeper session, or a Redis lock key's TTL. ``Session`` is what
a holder needs of it; ``LeaseSession`` (a lease granted by a ``LeaseBackend``) and
``KeptLease`` (a lease that began with a claim, such as a Redis key) implement it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from checkers.refusals import LEASE_NOT_FOUND, refusal_of
from core.client import WorkerContext
from core.run_clock import ns
from core.store import JsonlWriter
from workloads.errors import OpFailed, OpUnknown

Lease = Any
"""A lease id: an int (etcd lease, ZooKeeper session, sim) or a str (Consul session, the
random value of a Redis lock). Only compared and written to the records."""


class LeaseNotFound(OpFailed):
    """The service says the lease does not exist (expired or revoked). Its message begins
    with ``lease not found`` (a designed refusal, ``checkers.refusals``), whatever words
    the target's driver gave the details in."""

    def __init__(self, details: str = LEASE_NOT_FOUND) -> None:
        said = (
            details if refusal_of(details) == LEASE_NOT_FOUND else f"{LEASE_NOT_FOUND}: {details}"
        )
        super().__init__(said)


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
        lease: Lease,
        ttl: float,
        interval: float,
        keepalive: Callable[[Lease], Any],
        events: EventLog,
        name: str,
        granted_sent: int,
        local: bool = False,
    ) -> None:
        """``local``: the renewals are answered by one server alone (``LocalRenewals``)."""
        super().__init__(name=f"keepalive-{lease}", daemon=True)
        self._local = {"local": True} if local else {}
        self.lease, self.ttl, self.interval = lease, ttl, interval
        self._keepalive = keepalive
        self._events = events
        self._name = name
        self._clock = events.ctx.clock
        self._last_sent = granted_sent
        self._failing = False
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
                answered = self._keepalive(self.lease)
            except LeaseNotFound:
                self._lose("the service no longer knows the lease")
                return
            except (OpFailed, OpUnknown) as e:
                if not self._failing:
                    self._failing = True
                    self._events.record(
                        "keepalive-failed",
                        lease=self.lease,
                        lock=self._name,
                        sent=sent,
                        error=str(e)[:300],
                    )
                if self._clock.now() >= self._last_sent + ns(self.ttl):
                    self._lose(f"no keepalive acknowledged within the ttl (last error: {e})")
                    return
                continue
            self._failing = False
            if self._stop_event.is_set():
                return  # stopped while renewing: the lease may already be revoked
            self._last_sent = sent
            said = {"service_ttl": float(answered)} if _positive(answered) else {}
            self._events.record(
                "keepalive",
                lease=self.lease,
                ttl=self.ttl,
                lock=self._name,
                sent=sent,
                **said,
                **self._local,
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


def _positive(x: Any) -> bool:
    return isinstance(x, int | float) and x > 0


class Session(Protocol):
    """What one holding is taken under, as its holder sees it."""

    @property
    def lease(self) -> Lease:
        """The lease id, as the records name it."""
        ...

    @property
    def lost(self) -> bool:
        """True once the holder has noticed the lease is gone."""
        ...

    def mark_lost(self, reason: str) -> None:
        """Record that the lease is gone (once)."""
        ...

    def end(self, why: str = "released") -> None:
        """Stop renewing and let the lease go, best effort; ``why`` is recorded."""
        ...


class KeptLease:
    """A lease that is already held, renewed from now on by a keeper thread.

    Records ``lease-granted`` (``sent``: when the request that established it left, the
    earliest instant the service can have started counting its TTL) and starts a
    ``LeaseKeeper`` calling ``renew(lease)`` every ``interval`` seconds. ``on_end`` runs once
    the keeper has stopped (close its connection, revoke the lease...).
    """

    def __init__(
        self,
        lease: Lease,
        ttl: float,
        interval: float,
        renew: Callable[[Lease], Any],
        events: EventLog,
        name: str,
        sent: int,
        on_end: Callable[[], None] | None = None,
        local: bool = False,
    ) -> None:
        self._lease, self.ttl = lease, ttl
        self._on_end = on_end
        self._events, self._name = events, name
        events.record("lease-granted", lease=lease, ttl=ttl, lock=name, sent=sent)
        self.keeper = LeaseKeeper(lease, ttl, interval, renew, events, name, sent, local)
        self.keeper.start()

    @property
    def lease(self) -> Lease:
        return self._lease

    @property
    def lost(self) -> bool:
        """True once the keeper has noticed the lease is gone."""
        return self.keeper.lost

    def mark_lost(self, reason: str) -> None:
        self.keeper.mark_lost(reason)

    def end(self, why: str = "released") -> None:
        """Stop renewing, then ``on_end`` (once), recorded as ``lease-ended``."""
        sent = self._events.ctx.clock.now()
        self.keeper.stop()
        on_end, self._on_end = self._on_end, None
        if on_end is None:
            return
        # Recorded first: from now on the holder no longer acts on the holding, whether or
        # not the revoke below gets through before its process is stopped.
        self._events.record(
            "lease-ended", lease=self._lease, ttl=self.ttl, lock=self._name, sent=sent, reason=why
        )
        on_end()


class LeaseBackend(Protocol):
    """The lease half of a coordination service's driver (blocking, one connection)."""

    def grant_lease(self, ttl: float) -> Lease: ...

    def keepalive(self, lease: Lease) -> float: ...

    def revoke(self, lease: Lease) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class LocalRenewals(Protocol):
    """An optional ability of a ``LeaseBackend`` whose renewals one server answers from its
    own state (a ZooKeeper read): an acknowledgement then proves nothing of the lease at
    the service's leader, and its keepalive events say ``"local": true``."""

    def renewals_are_local(self) -> bool: ...


@runtime_checkable
class ReportsState(Protocol):
    """An optional ability of a ``LeaseBackend`` whose driver reports its session's
    connection state (kazoo's listeners): the holder records each change."""

    def on_state(self, report: Callable[[Lease, str, Mapping[str, str]], None]) -> None:
        """Call ``report(lease, state, where)`` on every state change of a session
        granted from now on; ``where``: what the driver says of the connection (``server``:
        the node it is to now, ``was``: the one it was to), or nothing."""
        ...


def record_states(backend: Any, events: EventLog, name: str) -> None:
    """Record the ``session-state`` events of the sessions ``backend`` grants from now on,
    as held under ``name``, when it reports them (``ReportsState``)."""
    if not isinstance(backend, ReportsState):
        return

    def report(lease: Lease, state: str, where: Mapping[str, str]) -> None:
        events.record("session-state", lease=lease, lock=name, state=state, **where)

    backend.on_state(report)


@runtime_checkable
class SharedConnection(Protocol):
    """An optional ability of a ``LeaseBackend`` whose lease is bound to its own connection
    (a ZooKeeper session): the keeper must renew through the same connection, which the
    driver makes safe to use from two threads."""

    def shared(self) -> LeaseBackend:
        """A handle on this very connection whose ``close`` does nothing."""
        ...


class LeaseSession(KeptLease):
    """A lease granted for one holding and its keeper: what backs one lock holding or one
    leadership on etcd, Consul, ZooKeeper and the sim service."""

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
        connection of its own (``connect()``: the keeper runs on another thread), or on
        the same one when the backend is a ``SharedConnection``."""
        sent = events.ctx.clock.now()
        record_states(backend, events, name)
        lease = backend.grant_lease(ttl)
        self._backend = backend
        self._keeper_conn = backend.shared() if isinstance(backend, SharedConnection) else connect()
        local = isinstance(backend, LocalRenewals) and backend.renewals_are_local()
        super().__init__(
            lease,
            ttl,
            interval,
            self._keeper_conn.keepalive,
            events,
            name,
            sent,
            on_end=self._revoke,
            local=local,
        )

    def _revoke(self) -> None:
        """A revoke that fails leaves a lease that simply expires."""
        self._keeper_conn.close()
        try:
            self._backend.revoke(self.lease)
        except (OpFailed, OpUnknown):
            pass
