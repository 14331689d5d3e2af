"""The herd workload's client: a lock client whose waiters wait by one of two recipes, and
count what each acquire cost.

Recipes (``--recipe``, ``RECIPES``):

- ``naive``: every waiter watches the lock itself; each release wakes all of them, they
  all try again, one wins (the herd effect: about N notifications per handoff);
- ``queue``: each waiter takes a place in a queue ordered by the service and watches its
  predecessor only; a release wakes the next one (about one notification per handoff).

Either way a waiter woken by a notification re-checks that it now holds the lock (or is
first): the notification says something changed, never that the lock is free.

What an acquire cost is kept in a ``Tally`` the target's backend fills in: every
notification delivered to the client (recorded at once as a ``herd-notified`` client
event, with what it was about), apart from it every watch the client's own connection
fired (its server lost or its session moved: a ``herd-session-event``, which no handoff
caused), every attempt that did not give the lock (a create that found the lock taken, a
check that found a predecessor: a ``herd-failed`` event), every request sent, by the
method the service counts it under (etcd's gRPC method, ZooKeeper's operation). At the end
of the acquire, granted or not, one ``herd-acquire`` event sums them up::

    {"event": "herd-notified", "lock": NAME, "recipe": R, "about": TEXT}
    {"event": "herd-session-event", "lock": NAME, "recipe": R, "about": TEXT}
    {"event": "herd-failed", "lock": NAME, "recipe": R}
    {"event": "herd-acquire", "lock": NAME, "recipe": R, "granted": BOOL,
     "notifications": N, "session_events": N, "failed_attempts": N, "requests": N,
     "requests_by_method": {METHOD: N}}

Where the backend can read the servers' own request counters (``CountsRequests``), the
client of the first thread reads them when it opens and again when it closes, each time a
``server-counters`` event (``checkers.herd_counters``): the herd checker holds our count
against the servers'.

``checkers.herd`` reads them. A target supplies a ``HerdBackend`` and lists
``herd_clients(driver)`` for the workload, its recipes the variants of its offer (a recipe
it cannot offer named in the offer's ``lacks``, and why: the run is refused before it
starts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from checkers.herd import ACQUIRE, FAILED, NOTIFIED, SESSION_EVENT
from checkers.herd_counters import COUNTERS, END, START
from core.client import ClientFactory, WorkerContext
from core.cluster import Cluster
from core.option_records import option
from core.options import RunOptions
from workloads.common.factories import HolderFactory, connector
from workloads.common.holder import LeaseHolderClient
from workloads.common.lease import EventLog, Lease, LeaseBackend

NAIVE: Final = "naive"
QUEUE: Final = "queue"
RECIPES: Final = (NAIVE, QUEUE)


@dataclass(frozen=True, slots=True)
class HerdOptions:
    """The waiters of the herd workload: how they wait for the lock, ``naive`` (all watch
    it) or ``queue`` (each its predecessor); ``opts.record(HerdOptions)``."""

    recipe: str = option(
        NAIVE,
        "naive (every waiter watches the lock) or queue (each waits on its predecessor "
        "only) (default: %(default)s)",
        choices=RECIPES,
        named="recipe",
        variant=True,
    )


class Tally:
    """What one acquire cost, filled in by the backend as it waits."""

    def __init__(self, events: EventLog, lock: str, recipe: str) -> None:
        self._events, self.lock, self.recipe = events, lock, recipe
        self.notifications = 0
        self.session_events = 0
        self.failed_attempts = 0
        self.requests = 0
        self.by_method: Counter[str] = Counter()

    def request(self, method: str, count: int = 1) -> None:
        """``count`` requests sent to the service, counted under ``method``: the name
        the service's own counters give it (``CountsRequests``)."""
        self.requests += count
        self.by_method[method] += count

    def failed(self) -> None:
        """An attempt or check that did not give the lock, recorded as it happens."""
        self.failed_attempts += 1
        self._events.record(FAILED, lock=self.lock, recipe=self.recipe)

    def notified(self, about: str) -> None:
        """A notification delivered to this client (a watch event, a blocking query that
        returned with a change), recorded as it happens."""
        self.notifications += 1
        self._events.record(NOTIFIED, lock=self.lock, recipe=self.recipe, about=about[:200])

    def session_event(self, about: str) -> None:
        """A watch fired by the client's own connection, not by a change of what it
        watched (its server lost, its session moved or expired: ZooKeeper fires every
        watch of a connection that drops), recorded as it happens, apart from the
        notifications: no handoff caused it."""
        self.session_events += 1
        self._events.record(SESSION_EVENT, lock=self.lock, recipe=self.recipe, about=about[:200])

    def close(self, granted: bool) -> None:
        """Record the acquire's sums."""
        self._events.record(
            ACQUIRE,
            lock=self.lock,
            recipe=self.recipe,
            granted=granted,
            notifications=self.notifications,
            session_events=self.session_events,
            failed_attempts=self.failed_attempts,
            requests=self.requests,
            requests_by_method=dict(self.by_method),
        )


class HerdBackend(LeaseBackend, Protocol):
    """A driver whose locks are taken by either recipe on a lease, granting fencing
    tokens; it remembers what it holds, so ``release`` needs no recipe."""

    def acquire_naive(self, name: str, lease: Lease, wait: float, tally: Tally) -> int: ...

    def acquire_queue(self, name: str, lease: Lease, wait: float, tally: Tally) -> int: ...

    def release(self, name: str, lease: Lease) -> None: ...


@runtime_checkable
class CountsRequests(Protocol):
    """An optional ability of a ``HerdBackend`` that can read the servers' own counters
    of the requests they served."""

    def server_counters(self) -> dict[str, Any]:
        """The fields of a ``server-counters`` event (``checkers.herd_counters``): each
        server's counters now, what they count and which of our methods each covers;
        quick: it is read while the worker opens and closes."""
        ...


def record_counters(backend: object, events: EventLog, phase: str) -> None:
    """Record the servers' request counters as a ``server-counters`` event of ``phase``
    (``START``, ``END``), or why they could not be read; nothing for a backend without
    them."""
    if not isinstance(backend, CountsRequests):
        return
    try:
        fields = backend.server_counters()
    except Exception as e:  # counters that cannot be read are said, never raised
        fields = {"error": f"{type(e).__name__}: {e}"}
    try:
        events.record(COUNTERS, phase=phase, **fields)
    except OSError:
        pass


class HerdClient(LeaseHolderClient[HerdBackend]):
    """One waiter: ``acquire`` (by ``recipe``) / ``write`` / ``release``. The client of
    the first thread reads the servers' request counters as it opens and as it closes."""

    take_f = "acquire"
    give_f = "release"
    number_key = "token"
    recipe = NAIVE

    def __init__(self, ctx: WorkerContext, *args: Any, **kwargs: Any) -> None:
        super().__init__(ctx, *args, **kwargs)
        if ctx.slot == 0:
            record_counters(self.backend, self.events, START)

    def close(self) -> None:
        if self.ctx.slot == 0:
            record_counters(self.backend, self.events, END)
        super().close()

    def _claim(self, name: str, lease: Lease, value: Any) -> int:
        tally = Tally(self.events, name, self.recipe)
        take = self.backend.acquire_queue if self.recipe == QUEUE else self.backend.acquire_naive
        granted = False
        try:
            token = take(name, lease, self.wait, tally)
            granted = True
        finally:
            tally.close(granted)
        return token

    def _unclaim(self, name: str, lease: Lease) -> None:
        self.backend.release(name, lease)


class QueueHerdClient(HerdClient):
    """A waiter of the queue recipe."""

    recipe = QUEUE


CLIENTS: Final[Mapping[str, type[HerdClient]]] = {NAIVE: HerdClient, QUEUE: QueueHerdClient}


@dataclass(frozen=True)
class HerdClients:
    """The herd workload's ``ClientBuilder`` on one target's ``driver`` (a
    ``HerdBackend`` taking ``(addresses, timeout=, prefix=)``); the recipes a target
    offers are its variants of the workload (``clusters.spec.Offer``)."""

    driver: Callable[..., Any]

    def __call__(self, opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        return HolderFactory.for_run(
            opts,
            CLIENTS[opts.record(HerdOptions).recipe],
            connector(opts, cluster, self.driver),
            resource,
        )


def herd_clients(driver: Callable[..., Any]) -> HerdClients:
    """The herd workload's clients over ``driver`` connections (see ``HerdClients``)."""
    return HerdClients(driver)
