"""The membership timeline of a registry run: each instance's true state, and what each
discovery client saw, read from the history and the fault windows.

- A *member* is one instance process (``register`` ok ``{"member", "ttl", "grace"}``);
  its ``heartbeat``s are its own proof of life.
- A *death* is a fault window that freezes the member's process (``freezes-client``: a
  client pause, until the window ends) or kills it (``kills-client``: for good). It
  counts from the completion of the fault's start op, when the harness had its proof
  (the process stopped or gone), never from a guess.
- An *abandonment* is the harness's own doing: an instance op that ended ``info`` (timed
  out, or its worker died), after which the runner replaced the process. It is reported
  apart; no verdict rests on it.
- A *listing* is one ``list`` op that succeeded: when it was asked, when it answered,
  the node and the members.
- A *move* is a member's session that reconnected to another server than it was connected
  to (the instance's ``session-state`` event ``CONNECTED`` with ``server`` and ``was``,
  ``workloads.common.lease``): the session, and the registration on it, lived on through the loss
  of its server (a ZooKeeper server killed or cut off from its ensemble).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from checkers.record import RunRecord
from checkers.windows import FREEZES_CLIENT, KILLS_CLIENT, FaultWindow, record_windows
from core.ops import Process

IN_FLIGHT_S: Final = 0.5
"""Seconds allowed for a renewal in flight at a member's death: sent before it, it may
reach the service after it (a loaded machine delays a request by tens of milliseconds;
half a second leaves a wide margin)."""
PAUSED: Final = "paused"
KILLED: Final = "killed"


@dataclass(frozen=True, slots=True)
class Death:
    """A member's process frozen (``PAUSED``, until ``end``) or killed (``end`` None)."""

    member: str
    process: Process
    kind: str
    start: int
    """Completion of the fault's start op (ns): the process was certainly stopped."""
    end: int | None
    words: str


@dataclass(frozen=True, slots=True)
class Listing:
    """One successful ``list``: asked at ``invoke``, answered at ``time``."""

    process: Process
    node: str | None
    invoke: int
    time: int
    members: frozenset[str]


@dataclass(frozen=True, slots=True)
class Move:
    """A member's session moved from server ``was`` to ``server`` at ``time``; ``lost``:
    when its connection was lost before it (its client said ``SUSPENDED``; None: not said)."""

    member: str
    time: int
    was: str
    server: str
    lost: int | None


@dataclass(frozen=True)
class Timeline:
    """What a registry run recorded, by member."""

    process_of: dict[str, Process]
    registered: dict[str, list[int]]
    """Member -> completion times of its successful ``register`` ops."""
    heartbeats: dict[str, list[int]]
    """Member -> completion times of its heartbeats (its proof of life)."""
    unregistered: dict[str, list[int]]
    """Member -> invocation times of heartbeats that found the registration lost."""
    abandoned: dict[str, int]
    """Member -> when the harness gave up on its process (its op ended info)."""
    deaths: list[Death]
    listings: list[Listing]
    windows: list[FaultWindow]
    ttl: float | None
    grace: float | None
    end: int
    """The time of the last recorded op (ns)."""
    moves: list[Move] = field(default_factory=list)

    @property
    def deadline_s(self) -> float | None:
        """The longest a dead member may stay listed: its TTL, the service's grace, and
        ``IN_FLIGHT_S`` for a renewal sent before the death that reached the service
        after it (the TTL then counts from its arrival)."""
        if self.ttl is None or self.grace is None:
            return None
        return self.ttl + self.grace + IN_FLIGHT_S

    def discoverers(self) -> list[Process]:
        return sorted({x.process for x in self.listings}, key=str)


def timeline(record: RunRecord) -> Timeline:
    """The membership timeline of ``record`` (see the module docstring)."""
    history = record.history
    windows = record_windows(record)
    process_of: dict[str, Process] = {}
    member_of: dict[Process, str] = {}
    registered: dict[str, list[int]] = {}
    heartbeats: dict[str, list[int]] = {}
    unregistered: dict[str, list[int]] = {}
    abandoned: dict[str, int] = {}
    listings: list[Listing] = []
    ttl: float | None = None
    grace: float | None = None
    for pair in history.client_ops().pairs():
        inv, done = pair.invoke, pair.completion
        value = _dict(done.value) if done is not None else {}
        if inv.f == "list" and done is not None and done.type == "ok":
            members = value.get("members")
            shown = frozenset(map(str, members)) if isinstance(members, list) else frozenset()
            listings.append(Listing(inv.process, done.node, inv.time, done.time, shown))
        elif inv.f == "register" and done is not None and done.type == "ok":
            member = str(value.get("member", f"i{inv.process}"))
            process_of[member], member_of[inv.process] = inv.process, member
            registered.setdefault(member, []).append(done.time)
            ttl = _number(value.get("ttl"), ttl)
            grace = _number(value.get("grace"), grace)
        elif inv.f == "heartbeat" and done is not None and done.type == "ok":
            member = member_of.get(inv.process, f"i{inv.process}")
            heartbeats.setdefault(member, []).append(done.time)
            if value.get("registered", True) is False:
                unregistered.setdefault(member, []).append(inv.time)
        lost = done is None or done.type == "info"
        if inv.f in ("register", "heartbeat") and lost and inv.process in member_of:
            abandoned.setdefault(member_of[inv.process], inv.time)
    deaths = _deaths(windows, member_of)
    end = max((op.time for op in history), default=0)
    return Timeline(
        process_of,
        registered,
        heartbeats,
        unregistered,
        abandoned,
        deaths,
        sorted(listings, key=lambda x: x.invoke),
        windows,
        ttl,
        grace,
        end,
        moves(record.events, set(process_of)),
    )


def moves(events: Sequence[dict[str, Any]], members: set[str]) -> list[Move]:
    """The moves of the ``members``' sessions, in time order (see the module docstring)."""
    out: list[Move] = []
    lost: dict[tuple[str, Any], int] = {}
    states = (e for e in events if e.get("event") == "session-state" and e.get("lock") in members)
    for e in sorted(states, key=lambda e: _time(e.get("time"))):
        member, key = str(e["lock"]), (str(e["lock"]), e.get("lease"))
        if e.get("state") == "SUSPENDED":
            lost.setdefault(key, _time(e.get("time")))
        elif e.get("state") == "CONNECTED":
            was, server = e.get("was"), e.get("server")
            since = lost.pop(key, None)
            if isinstance(was, str) and isinstance(server, str) and was != server:
                out.append(Move(member, _time(e.get("time")), was, server, since))
    return out


def _time(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _dict(value: Any) -> dict[str, Any]:
    """A completion's value as the dict it should be (anything else reads as empty)."""
    return value if isinstance(value, dict) else {}


def _number(value: Any, default: float | None) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else default


def _deaths(windows: Sequence[FaultWindow], member_of: dict[Process, str]) -> list[Death]:
    """The deaths of members: windows that freeze or kill their processes, from the
    completion of each window's start op."""
    out: list[Death] = []
    for w in windows:
        if not w.ok or not w.effects & {FREEZES_CLIENT, KILLS_CLIENT}:
            continue
        kind = KILLED if KILLS_CLIENT in w.effects else PAUSED
        start = w.start  # applied: the start op's completion
        for p in w.processes:
            if p in member_of:
                end = None if kind == KILLED else w.end
                out.append(Death(member_of[p], p, kind, start, end, w.describe()))
    return sorted(out, key=lambda d: d.start)
