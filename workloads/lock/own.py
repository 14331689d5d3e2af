"""Bring your own lock: what a lock library, or a user's in-house lock, offers the harness,
and the lock workload's client that drives one as its documentation shows (docs/own-lock.md).

The protocol. A lock is built once per client worker, from the target's endpoints::

    make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> OwnLock

``endpoints``: every server's ``"ip:port"``, the worker's own first; ``settings``: ``ttl``
and ``wait`` (seconds, the run's ``--lease-ttl`` and ``--acquire-wait``), ``target`` (its
name), ``client`` (the worker's process id), ``timeout`` (seconds a request may wait for
its answer) and ``prefix`` (this run's key prefix, which the lock names already carry).
Then:

- ``acquire(name, ttl, wait) -> Held | None``: take lock ``name``, blocking up to ``wait``
  seconds; None when it was not granted in that time. ``Held.token`` is the fencing token
  the lock gives (None: it gives none, and the critical section writes unfenced);
  ``Held.handle`` is whatever the lock needs back to release it (``Held.lease``: the
  service's lease id, when the lock knows it);
- ``release(name, held)``: give it up; raise ``LockLost`` when the lock says it no longer
  held it (expired, taken by another);
- ``still_held(name, held) -> bool | None`` (optional, ``StillHeld``): whether the lock
  believes it still holds (None: it cannot tell);
- ``close()``.

Any other exception is an outcome the harness cannot know (the operation completes as
``info``). The lock keeps its own renewal (its threads, its timeouts): the harness only
observes, from outside, what the lock answered. Its client (``OwnLockClient``) runs the
lock workload's acquire -> write with the token -> release and records the lock's belief in
the client events (``workloads.common.lease``): ``lease-granted`` (``sent``: when the
acquire call began, the earliest the lock can have started counting its TTL; ``token``;
``by: "library"``, no keepalive events follow: the renewals are the library's), a
``still-held`` event with the answer (``sent``: when it was asked) each time the holder asks
before and after its work (a False is a ``lease-lost``), ``lease-lost`` when the release
raised ``LockLost``, and ``lease-ended`` when the holder let go (``sent``: when the release
call began).
"""

from __future__ import annotations

import importlib
import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, Protocol, runtime_checkable

from checkers.refusals import NOT_GRANTED
from core.client import Client, WorkerContext
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.factories import HolderFactory, connector
from workloads.common.holder import HolderClient
from workloads.common.lease import EventLog, LeaseNotFound, Session
from workloads.common.lock_options import LockOptions
from workloads.errors import OpFailed, OpUnknown


@dataclass(frozen=True, slots=True)
class Held:
    """What a granted ``acquire`` gives: the fencing token, if the lock gives one, and the
    lock's own handle on the holding (its lock object, its owner value...); ``lease``: the
    service's id of the lease the holding is under, when the lock knows it (the records
    then tie the grant to the service's own log), else the harness names the holding."""

    token: int | None = None
    handle: Any = None
    lease: Any = None


class LockLost(Exception):
    """Raised by ``release`` when the lock says it no longer held the lock."""


class OwnLock(Protocol):
    """A lock library or in-house lock, as the harness drives it (module docstring)."""

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None: ...

    def release(self, name: str, held: Held) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class StillHeld(Protocol):
    """The optional ability of an ``OwnLock`` to say whether it believes it still holds."""

    def still_held(self, name: str, held: Held) -> bool | None: ...


Make = Callable[[Sequence[str], Mapping[str, Any]], OwnLock]
"""How a lock is built: from the target's endpoints and the run's settings."""


def load(ref: str) -> Make:
    """The ``make`` of ``module:attribute`` (ImportError, AttributeError, TypeError: not
    callable; ``workloads.libraries.resolve`` says these in one line)."""
    module, _, attr = ref.partition(":")
    made = getattr(importlib.import_module(module), attr)
    if not callable(made):
        raise TypeError(f"{ref} is a {type(made).__name__}, not a callable make")
    return made


@dataclass(frozen=True, slots=True)
class OwnLockDriver:
    """Picklable: opens one ``OwnLock`` in a worker (``make`` loaded there, after the
    library's environment is put first on its path)."""

    make: str
    paths: tuple[str, ...] = ()
    """The library's site-packages, put before everything else on the worker's path."""

    def __call__(self, addresses: Sequence[str], **settings: Any) -> OwnLock:
        for path in reversed(self.paths):
            if path not in sys.path:
                sys.path.insert(0, path)
        return load(self.make)(list(addresses), settings)


class LibraryHolding:
    """One holding of an ``OwnLock``, as its holder sees it (a ``Session``): the lock
    renews it (or not) by itself, so there is no keeper; ``lost`` asks the lock when it
    can say (``StillHeld``), else only a loss said on release is known."""

    def __init__(
        self,
        lock: OwnLock,
        name: str,
        held: Held,
        lease: str,
        ttl: float,
        events: EventLog,
        lock_name: str,
        sent: int,
        ask: bool,
    ) -> None:
        self._lock, self._name, self.held = lock, name, held
        self._lease, self.ttl, self._events, self._lock_name = lease, ttl, events, lock_name
        self._ask = ask and isinstance(lock, StillHeld)
        self._lost = False
        self.letting_go: int | None = None
        events.record(
            "lease-granted",
            lease=lease,
            ttl=ttl,
            lock=lock_name,
            sent=sent,
            token=held.token,
            by="library",
        )

    @property
    def lease(self) -> str:
        return self._lease

    @property
    def lost(self) -> bool:
        """Known lost, or the lock says now it no longer holds (recorded either way)."""
        if self._lost or not self._ask:
            return self._lost
        sent = self._events.ctx.clock.now()
        try:
            answer = self._lock.still_held(self._name, self.held)  # type: ignore[attr-defined]
        except Exception as e:  # the lock could not say: not known lost
            self._events.record(
                "still-held", lease=self._lease, lock=self._lock_name, sent=sent, error=str(e)[:300]
            )
            return False
        self._events.record(
            "still-held", lease=self._lease, lock=self._lock_name, sent=sent, held=answer
        )
        if answer is False:
            self.mark_lost("the lock says it no longer holds it")
        return self._lost

    def mark_lost(self, reason: str) -> None:
        if self._lost:
            return
        self._lost = True
        self._events.record(
            "lease-lost", lease=self._lease, ttl=self.ttl, lock=self._lock_name, reason=reason
        )

    def end(self, why: str = "released") -> None:
        sent = self.letting_go if self.letting_go is not None else self._events.ctx.clock.now()
        self._events.record(
            "lease-ended",
            lease=self._lease,
            ttl=self.ttl,
            lock=self._lock_name,
            sent=sent,
            reason=why,
        )


class OwnLockClient(HolderClient[OwnLock]):
    """One worker's client of an ``OwnLock``: ``acquire`` / ``write`` / ``release``."""

    take_f = "acquire"
    give_f = "release"
    number_key = "token"

    prefix = "harness"
    """This run's key prefix (set by ``OwnLockFactory``)."""
    _holdings = itertools.count(1)

    def _key(self, name: str) -> str:
        """The name the lock is asked for: this run's prefix, then the lock's name."""
        return f"{self.prefix}/{name}"

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        sent = self.ctx.clock.now()
        try:
            held = self.backend.acquire(self._key(name), self.ttl, self.wait)
        except Exception as e:
            raise OpUnknown(f"acquire {name}: {type(e).__name__}: {e}") from e
        if held is None:
            raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {self.wait:g} s")
        if not isinstance(held, Held):
            raise OpUnknown(f"acquire {name} answered {held!r}, not a Held or None")
        lease = (
            held.lease if held.lease is not None else f"{self.ctx.process}-{next(self._holdings)}"
        )
        key = self._key(name)
        session = LibraryHolding(
            self.backend, key, held, lease, self.ttl, self.events, name, sent, self.check
        )
        return session, held.token

    def _unclaim(self, name: str, lease: Any) -> None:
        session = self.session
        assert isinstance(session, LibraryHolding)
        session.letting_go = self.ctx.clock.now()
        try:
            self.backend.release(self._key(name), session.held)
        except LockLost as e:
            raise LeaseNotFound(f"the lock says it no longer held {name} ({e})") from e
        except Exception as e:
            raise OpUnknown(f"release {name}: {type(e).__name__}: {e}") from e


@dataclass(frozen=True, slots=True)
class OwnLockFactory(HolderFactory):
    """Lock clients of an ``OwnLock`` (``connector.driver`` is its ``OwnLockDriver``);
    ``interpreter``: the Python the workers run with (the library's environment's; None:
    the harness's own), ``library``: what test.json records of the lock."""

    interpreter: str | None = None
    library: tuple[tuple[str, Any], ...] = ()
    prefix: str = "harness"

    def __call__(self, ctx: WorkerContext) -> Client:
        client = HolderFactory.__call__(self, ctx)
        assert isinstance(client, OwnLockClient)
        client.prefix = self.prefix
        return client

    def connect_for(self, ctx: WorkerContext) -> tuple[Callable[[], Any], str | None]:
        connect, node = HolderFactory.connect_for(self, ctx)
        opened: Callable[..., Any] = connect  # the driver's partial: settings go on
        return partial(opened, client=ctx.process), node


def own_lock_clients(
    make: str,
    paths: tuple[str, ...] = (),
    interpreter: str | None = None,
    library: Mapping[str, Any] | None = None,
    spread: bool = False,
) -> Callable[[RunOptions, Cluster, str | None], OwnLockFactory]:
    """The client builder of the lock ``make`` (``module:attribute``) names, for any
    target: its endpoints, the run's TTL and wait; ``spread``: whether the lock talks to
    every server (its completions name no node), else to the worker's own node first (they
    name it, so a fault aimed at the holder's server finds it; the connector's ``spread``
    says the opposite: workers spread one per node)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> OwnLockFactory:
        lock = opts.record(LockOptions)
        settings = {"ttl": lock.lease_ttl, "wait": lock.acquire_wait}
        driver = OwnLockDriver(make, paths)
        link = connector(opts, cluster, driver, not spread, target=opts.target, **settings)
        base = HolderFactory.for_run(opts, OwnLockClient, link, resource)
        return OwnLockFactory(
            **{f.name: getattr(base, f.name) for f in fields(HolderFactory)},
            interpreter=interpreter,
            library=tuple(sorted((library or {}).items())),
            prefix=dict(link.options)["prefix"],
        )

    return build
