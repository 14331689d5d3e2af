"""The sim coordination service: leases, locks, CAS registers and elections, in memory.

Semantics follow etcd's:

- a *lease* has a TTL; a keepalive renews it to a full TTL; when it expires (on this
  process's monotonic clock) or is revoked, every lock and leadership attached to it is
  freed;
- a *lock* per name is held by one lease; waiters queue in FIFO order (no herd), or try
  and watch (``lock_try``, ``lock_watch``: every watcher woken by a release); each grant
  carries a *fencing token* from one global counter that increases with every grant and
  every election win (like etcd's revision);
- an *election* per name has at most one leader lease; each new leader gets an *epoch*
  from the same counter;
- a *register* per key offers read, write and compare-and-set.

Durability: with a ``WriteAheadLog`` every state change (a lease's deadline, its end, a
seat taken or freed, a register written) is appended to it before the server answers, and
replayed when the service starts again after a crash, as a replicated service keeps its
state across the loss of a node. Lease deadlines are on the run clock (system-wide
``CLOCK_MONOTONIC``), so a lease keeps its expiry across the restart: one that ran out
while the server was down expires at the first sweep, logged with its deadline. Tokens,
epochs and revisions never go back; registers keep their values. Queued waiters are not
state: their connections died with the server.

Known bugs can be switched on (``BUGS``) so that checkers can be shown to catch them.
Every state change of leases, locks and leaders is logged with its run-clock time.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from checkers.refusals import CAS_MISMATCH, LEASE_NOT_FOUND, NOT_ELECTED, NOT_GRANTED
from clusters.sim.wal import WriteAheadLog
from core.store import JsonlWriter
from workloads.common.wire import RequestError

BUGS: Final[dict[str, str]] = {
    "lock-ignores-lease": "a lock waiter is granted the lock after a fixed grace even though "
    "the holder's lease is still valid (two holders at once)",
    "token-reuse": "a new lock grant reuses the previous holder's token instead of a higher one",
    "stale-read": "register reads sometimes return an older value",
    "epoch-reuse": "a new leader gets the previous leader's epoch instead of a higher one",
    "forget-on-restart": "the write-ahead log is not replayed: after a crash the service "
    "restarts empty and grants a lock again while its holder's lease is still valid",
}

SWEEP_INTERVAL_S: Final = 0.01
_NS = 1_000_000_000


class UnknownBug(ValueError):
    """A bug name that is not in ``BUGS``."""


def check_bugs(names: Iterable[str]) -> frozenset[str]:
    """Validate bug names; raise ``UnknownBug`` naming the known ones."""
    bugs = frozenset(names)
    unknown = sorted(bugs - BUGS.keys())
    if unknown:
        raise UnknownBug(f"unknown sim bug(s) {unknown}; known: {sorted(BUGS)}")
    return bugs


@dataclass(slots=True)
class _Lease:
    id: int
    ttl: float
    deadline: int
    locks: set[str] = field(default_factory=set)
    elections: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Waiter:
    """A queued lock acquirer or election candidate."""

    lease: int
    future: asyncio.Future[int]
    value: Any = None


@dataclass(slots=True)
class _Seat:
    """A lock or a leadership: one holder lease at a time, a queue of waiters."""

    holder: int | None = None
    number: int | None = None  # the holder's token or epoch
    last_number: int | None = None
    value: Any = None  # the leader's campaign value
    waiters: deque[_Waiter] = field(default_factory=deque)
    watchers: list[asyncio.Future[None]] = field(default_factory=list)
    """Lock watches (``lock_watch``), each woken once when the seat is freed."""


class SimService:
    """The service state. Methods are the protocol's operations; they raise
    ``RequestError`` to refuse, which the client sees as a definite failure.

    ``now`` returns nanoseconds on a monotonic clock (the run clock in the server, a fake
    one in tests); lease deadlines and logged times are on it. ``wal``: where state changes
    are logged and, on construction, replayed from (none: state lives in memory only).
    """

    def __init__(
        self,
        now: Callable[[], int],
        bugs: Iterable[str] = (),
        events: JsonlWriter | None = None,
        lock_grace_s: float = 1.0,
        stale_read_probability: float = 0.5,
        seed: int | None = None,
        wal: WriteAheadLog | None = None,
    ) -> None:
        self.now = now
        self.bugs = check_bugs(bugs)
        self.events = events
        self.lock_grace_s = lock_grace_s
        self.stale_read_probability = stale_read_probability
        self._rng = random.Random(seed)
        self._revision = 0
        self._leases: dict[int, _Lease] = {}
        self._locks: dict[str, _Seat] = {}
        self._elections: dict[str, _Seat] = {}
        self._registers: dict[str, list[Any]] = {}
        self._members: dict[str, int] = {}  # registered member -> its lease
        self._wal = wal
        if wal is not None and "forget-on-restart" not in self.bugs:
            self._recover(wal)

    # --- leases ----------------------------------------------------------------------

    def lease_grant(self, ttl: float) -> dict[str, Any]:
        if ttl <= 0:
            raise RequestError(f"ttl must be positive, not {ttl}")
        # random and unseeded: a restarted server (even one that forgot) never reuses an id
        lease_id = secrets.randbits(48)
        while lease_id in self._leases or lease_id == 0:
            lease_id = secrets.randbits(48)
        self._commit(
            {"t": "lease", "id": lease_id, "ttl": ttl, "deadline": self.now() + int(ttl * _NS)}
        )
        self._log("lease-granted", lease=lease_id, ttl=ttl)
        return {"lease": lease_id, "ttl": ttl}

    def lease_keepalive(self, lease: int) -> dict[str, Any]:
        """Renew to a full TTL; answers the TTL now remaining."""
        le = self._live(lease)
        self._commit(
            {"t": "lease", "id": le.id, "ttl": le.ttl, "deadline": self.now() + int(le.ttl * _NS)}
        )
        self._log("lease-renewed", lease=lease, ttl=le.ttl)
        return {"ttl": le.ttl}

    def lease_ttl(self, lease: int) -> dict[str, Any]:
        le = self._live(lease)
        return {"ttl": max(0, le.deadline - self.now()) / _NS}

    def lease_revoke(self, lease: int) -> dict[str, Any]:
        le = self._live(lease)
        self._end_lease(le, "lease-revoked")
        return {}

    def expire_due(self) -> None:
        """Expire every lease whose deadline has passed; called before each operation and
        by ``sweep`` every few milliseconds."""
        t = self.now()
        due = [le for le in self._leases.values() if le.deadline <= t]
        # Every due lease ends before any seat is given again: after a pause, or a restart,
        # freeing one lease's lock must not grant it to a waiter whose lease is also due.
        for le in due:
            self._commit({"t": "end", "id": le.id})
        for le in due:
            self._free_seats(le, "lease-expired", deadline=le.deadline)

    async def sweep(self) -> None:
        """Expire leases on time even when nobody calls (a background task)."""
        while True:
            self.expire_due()
            self.sync()
            await asyncio.sleep(SWEEP_INTERVAL_S)

    def _live(self, lease: int) -> _Lease:
        self.expire_due()
        le = self._leases.get(lease)
        if le is None:
            raise RequestError(LEASE_NOT_FOUND)
        return le

    def _end_lease(self, le: _Lease, event: str, **extra: Any) -> None:
        self._commit({"t": "end", "id": le.id})
        self._free_seats(le, event, **extra)

    def _free_seats(self, le: _Lease, event: str, **extra: Any) -> None:
        """Log the end of lease ``le`` (already removed), free what it held, drop its
        waiters and seat the next live ones."""
        self._log(event, lease=le.id, **extra)
        for name in list(le.locks):
            self._vacate(self._locks[name], "lock", name, event)
        for name in list(le.elections):
            self._vacate(self._elections[name], "election", name, event)
        for kind, seats in (("lock", self._locks), ("election", self._elections)):
            for name, seat in seats.items():
                for w in [w for w in seat.waiters if w.lease == le.id]:
                    seat.waiters.remove(w)
                    if not w.future.done():
                        w.future.set_exception(RequestError(LEASE_NOT_FOUND))
                self._seat_next(seat, kind, name)

    # --- locks and elections share one mechanism --------------------------------------

    async def lock_acquire(self, name: str, lease: int, wait: float) -> dict[str, Any]:
        """Block until ``lease`` holds lock ``name`` (-> its token) or ``wait`` seconds
        pass (-> "not granted", and the request is withdrawn from the queue)."""
        seat = self._locks.get(name)
        queued = seat is not None and seat.holder not in (None, lease)
        token = await self._queue_for(self._locks, "lock", name, lease, None, wait)
        return {"token": token, "queued": queued}

    def lock_try(self, name: str, lease: int) -> dict[str, Any]:
        """Take lock ``name`` for ``lease`` if nobody holds it or queues for it (-> its
        token), else answer at once with the holder's token (``held_by``): the naive
        recipe's try, which waits with ``lock_watch``."""
        le = self._live(lease)
        seat = self._locks.setdefault(name, _Seat())
        if seat.holder is not None or seat.waiters:
            return {"token": seat.number if seat.holder == lease else None, "held_by": seat.number}
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._seat(seat, "lock", name, _Waiter(le.id, fut))
        return {"token": fut.result(), "held_by": None}

    async def lock_watch(self, name: str, held_by: int | None, wait: float) -> dict[str, Any]:
        """Watch lock ``name``, seen held with token ``held_by``: answer at once when
        that holding is already over (``notified`` false), else when it is freed
        (``notified`` true) or ``wait`` seconds pass (false). Every watcher of the lock
        is woken by the same release: the herd."""
        seat = self._locks.setdefault(name, _Seat())
        if seat.holder is None or seat.number != held_by:
            return {"notified": False}
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        seat.watchers.append(fut)
        try:
            await asyncio.wait_for(asyncio.shield(fut), wait)
        except TimeoutError:
            if fut in seat.watchers:
                seat.watchers.remove(fut)
            return {"notified": False}
        return {"notified": True}

    def lock_release(self, name: str, lease: int) -> dict[str, Any]:
        self._live(lease)
        seat = self._locks.get(name)
        if seat is None or seat.holder != lease:
            raise RequestError("not the holder")
        self._vacate(seat, "lock", name, "released")
        self._seat_next(seat, "lock", name)
        return {}

    def lock_holder(self, name: str) -> dict[str, Any]:
        self.expire_due()
        seat = self._locks.get(name, _Seat())
        return {"lease": seat.holder, "token": seat.number}

    async def elect_campaign(
        self, name: str, lease: int, value: Any, wait: float
    ) -> dict[str, Any]:
        """Block until ``lease`` leads election ``name`` (-> its epoch) or ``wait`` seconds
        pass (-> "not elected")."""
        epoch = await self._queue_for(self._elections, "election", name, lease, value, wait)
        return {"epoch": epoch}

    def elect_observe(self, name: str) -> dict[str, Any]:
        self.expire_due()
        seat = self._elections.get(name, _Seat())
        return {"leader": seat.value if seat.holder is not None else None, "epoch": seat.number}

    def elect_resign(self, name: str, lease: int) -> dict[str, Any]:
        self._live(lease)
        seat = self._elections.get(name)
        if seat is None or seat.holder != lease:
            raise RequestError("not the leader")
        self._vacate(seat, "election", name, "resigned")
        self._seat_next(seat, "election", name)
        return {}

    async def _queue_for(
        self, seats: dict[str, _Seat], kind: str, name: str, lease: int, value: Any, wait: float
    ) -> int:
        le = self._live(lease)
        seat = seats.setdefault(name, _Seat())
        if seat.holder == lease:
            assert seat.number is not None
            return seat.number  # re-entrant: the lease already holds it
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(le.id, fut, value)
        seat.waiters.append(waiter)
        self._seat_next(seat, kind, name)
        forcing = None
        if kind == "lock" and "lock-ignores-lease" in self.bugs and not fut.done():
            forcing = asyncio.get_running_loop().call_later(
                self.lock_grace_s, self._force, seat, kind, name, waiter
            )
        try:
            return await asyncio.wait_for(asyncio.shield(fut), wait)
        except TimeoutError:
            if fut.done() and not fut.cancelled():
                return fut.result()  # granted in the same instant the wait ran out
            if waiter in seat.waiters:
                seat.waiters.remove(waiter)
            fut.cancel()
            raise RequestError(NOT_GRANTED if kind == "lock" else NOT_ELECTED) from None
        finally:
            if forcing is not None:
                forcing.cancel()

    def _seat_next(self, seat: _Seat, kind: str, name: str) -> None:
        """Seat the first live waiter if the seat is free."""
        while seat.holder is None and seat.waiters:
            w = seat.waiters.popleft()
            if w.future.done():
                continue
            if w.lease not in self._leases:
                w.future.set_exception(RequestError(LEASE_NOT_FOUND))
                continue
            self._seat(seat, kind, name, w)

    def _seat(self, seat: _Seat, kind: str, name: str, w: _Waiter, **extra: Any) -> None:
        reuse = "token-reuse" if kind == "lock" else "epoch-reuse"
        if reuse in self.bugs and seat.last_number is not None:
            number = seat.last_number
        else:
            self._revision += 1
            number = self._revision
        self._commit(
            {
                "t": "seat",
                "kind": kind,
                "name": name,
                "holder": w.lease,
                "number": number,
                "value": w.value,
            }
        )
        if kind == "lock":
            self._log("lock-granted", lock=name, lease=w.lease, token=number, **extra)
        else:
            self._log("leader-elected", election=name, lease=w.lease, epoch=number, value=w.value)
        w.future.set_result(number)

    def _force(self, seat: _Seat, kind: str, name: str, w: _Waiter) -> None:
        """The ``lock-ignores-lease`` bug: after the grace, seat ``w`` over a live holder."""
        if w.future.done() or w not in seat.waiters or w.lease not in self._leases:
            return
        seat.waiters.remove(w)
        displaced = seat.holder
        if displaced is not None:
            self._vacate(seat, kind, name, "displaced")
        self._seat(seat, kind, name, w, forced=True, displaced=displaced)

    def _vacate(self, seat: _Seat, kind: str, name: str, reason: str) -> None:
        holder, number = seat.holder, seat.number
        if holder is None:
            return
        self._commit({"t": "seat", "kind": kind, "name": name, "holder": None})
        watchers, seat.watchers = seat.watchers, []
        for fut in watchers:
            if not fut.done():
                fut.set_result(None)
        if kind == "lock":
            self._log("lock-released", lock=name, lease=holder, token=number, reason=reason)
        else:
            self._log("leader-resigned", election=name, lease=holder, epoch=number, reason=reason)

    # --- registers -------------------------------------------------------------------

    def reg_read(self, key: str) -> dict[str, Any]:
        versions = self._registers.get(key, [None])
        stale = "stale-read" in self.bugs and len(versions) > 1
        if stale and self._rng.random() < self.stale_read_probability:
            return {"value": self._rng.choice(versions[:-1])}
        return {"value": versions[-1]}

    def reg_write(self, key: str, value: Any) -> dict[str, Any]:
        self._commit({"t": "reg", "key": key, "value": value})
        return {}

    def reg_cas(self, key: str, old: Any, new: Any) -> dict[str, Any]:
        current = self._registers.get(key, [None])[-1]
        if current != old:
            raise RequestError(f"{CAS_MISMATCH}: value is {current!r}, not {old!r}")
        return self.reg_write(key, new)

    # --- service registration: members on leases ---------------------------------------

    def member_register(self, member: str, lease: int) -> dict[str, Any]:
        """``member`` listed while ``lease`` lives (an etcd key on a lease)."""
        self._commit({"t": "member", "member": member, "lease": self._live(lease).id})
        return {}

    def member_list(self) -> dict[str, Any]:
        self.expire_due()
        return {"members": sorted(m for m, le in self._members.items() if le in self._leases)}

    # --- durability: every state change is one record, applied and logged alike --------

    def sync(self) -> None:
        """Make every change so far durable (fsync the log); call before answering."""
        if self._wal is not None:
            self._wal.sync()

    def unsynced(self) -> bool:
        """Whether a change is in no sync yet (``sync`` has something to do)."""
        return self._wal is not None and self._wal.dirty

    def detach_sync(self) -> Callable[[], None] | None:
        """The sync of every change so far, to run in another thread (None: nothing to
        sync): ``clusters.sim.wal.GroupCommit``."""
        return None if self._wal is None else self._wal.detach_sync()

    def _commit(self, rec: dict[str, Any]) -> None:
        if self._wal is not None:
            self._wal.append(rec)
        self._apply(rec)

    def _recover(self, wal: WriteAheadLog) -> None:
        """Rebuild the state an earlier life of the server left in ``wal``."""
        for rec in wal.records():
            self._apply(rec)
        for seats in (self._locks, self._elections):
            for seat in seats.values():  # a crash between a lease's end and its seats'
                if seat.holder is not None and seat.holder not in self._leases:
                    seat.holder, seat.number, seat.value = None, None, None

    def _apply(self, rec: dict[str, Any]) -> None:
        t = rec.get("t")
        if t == "lease":
            le = self._leases.get(rec["id"])
            if le is None:
                self._leases[rec["id"]] = _Lease(rec["id"], rec["ttl"], rec["deadline"])
            else:
                le.deadline = rec["deadline"]
        elif t == "end":
            self._leases.pop(rec["id"], None)
        elif t == "seat":
            self._apply_seat(rec)
        elif t == "member":
            self._members[rec["member"]] = rec["lease"]
        elif t == "reg":
            versions = self._registers.setdefault(rec["key"], [None])
            versions.append(rec["value"])
            del versions[:-16]  # older versions only feed the stale-read bug

    def _apply_seat(self, rec: dict[str, Any]) -> None:
        kind, name = rec["kind"], rec["name"]
        seat = (self._locks if kind == "lock" else self._elections).setdefault(name, _Seat())
        for lease in (seat.holder, rec["holder"]):
            le = self._leases.get(lease) if lease is not None else None
            if le is not None:
                held = le.locks if kind == "lock" else le.elections
                (held.add if lease == rec["holder"] else held.discard)(name)
        if rec["holder"] is None:
            seat.holder, seat.number, seat.value = None, None, None
            return
        number = rec["number"]
        seat.holder, seat.number, seat.last_number = rec["holder"], number, number
        seat.value = rec.get("value")
        self._revision = max(self._revision, number)

    # --- plumbing --------------------------------------------------------------------

    def _log(self, event: str, **fields: Any) -> None:
        if self.events is not None:
            self.events.append({"time": self.now(), "event": event, **fields})
