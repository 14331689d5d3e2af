"""Holdings: who held which lock (or led which election), when, with which number.

A *holding* is read from the client history: it begins with a take operation (lock
``acquire``, election ``campaign``) whose ``ok`` value carries the fencing number
(``token`` or ``epoch``), the ``lease`` and the ``name``; it ends, in the holder's own
view, at its give operation's invocation (``release``, ``resign``) or at the moment the
holder noticed its lease lost or let it go (``end_at_loss``: a worker that closes lets go
of what it held). A take that ended ``info`` is a *possible* holding (``start`` None): it
may have been granted, but proves nothing - unless the runner recorded its late completion
(``late-completion`` in the client events: the abandoned worker's take did return ``ok``),
which makes it definite from that instant. A holding whose holder had an operation end
``info`` is *abandoned* by the runner from then on (``abandoned``): the harness stopped
waiting for it, and whatever it did next is known only from its events.

When the service keeps its own log (the sim server), ``service_grants`` reads its grants
(``lock-granted`` with a token, ``leader-elected`` with an epoch): the exact instant each
was granted, which ``attach_grants`` copies onto the matching holding.

``Terms`` holds the words a report uses for one kind of holding, so that the lock and
election checkers share their analysis and differ only in vocabulary. Its take and give
operations are the ones the run's workload declared (``workloads.holders``, recorded in
test.json's ``holder``: ``declared``); ``LOCK`` and ``ELECTION`` carry the names runs
used before they recorded them, for those runs' test.json and for records built in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, TypeGuard

from checkers.leases import LeaseFacts
from core.history import History, Pair
from core.ops import Process


@dataclass(frozen=True, slots=True)
class Terms:
    """The vocabulary and the operations of one kind of holding."""

    take: tuple[str, ...]
    give: tuple[str, ...]
    number: str  # "token" or "epoch"
    holder: str  # "holder" or "leader"
    hold: str  # "held" or "led"
    thing: str  # "lock" or "election": what has a name
    tenure: str  # "holding" or "leadership": one process's time with it
    prize: str  # "lock" or "leadership": what is granted and lost
    service_grant: str  # the service's log event of a grant
    service_key: str  # the field naming the lock or election in that event


LOCK: Final = Terms(
    ("acquire",),
    ("release",),
    "token",
    "holder",
    "held",
    "lock",
    "holding",
    "lock",
    "lock-granted",
    "lock",
)
ELECTION: Final = Terms(
    ("campaign",),
    ("resign",),
    "epoch",
    "leader",
    "led",
    "election",
    "leadership",
    "leadership",
    "leader-elected",
    "election",
)
EITHER: Final = replace(LOCK, take=LOCK.take + ELECTION.take, give=LOCK.give + ELECTION.give)
"""Lock words, but reading election operations too (the report's lock lanes of a run
recorded before its workload declared its operations)."""


def declared(test: Mapping[str, Any], terms: Terms) -> Terms:
    """``terms`` taking and giving by the operations the run's workload declared (test.json's
    ``holder``: ``takes`` and ``gives``); a run recorded before the declaration (or built in
    memory without one) keeps ``terms``' own names."""
    holder = test.get("holder")
    if not isinstance(holder, Mapping):
        return terms
    takes, gives = holder.get("takes"), holder.get("gives")
    if not _names(takes) or not _names(gives):
        return terms
    return replace(terms, take=tuple(takes), give=tuple(gives))


def recorded_terms(test: Mapping[str, Any]) -> Terms | None:
    """The words and operations of a run's numbered holdings as its workload declared them
    (an ``epoch``: an election's words, else a lock's); None when its holder's holdings are
    not numbered, or it has no holder (nothing of it is a holding these functions read);
    ``EITHER`` for a run recorded before the declaration."""
    if "holder" not in test:
        return EITHER
    holder = test["holder"]
    if not isinstance(holder, Mapping) or holder.get("number") is None:
        return None
    return declared(test, ELECTION if holder["number"] == ELECTION.number else LOCK)


def _names(value: Any) -> TypeGuard[list[str]]:
    """Whether ``value`` is a list of operation names, as test.json records them."""
    return isinstance(value, list) and all(isinstance(f, str) for f in value)


@dataclass(slots=True)
class Holding:
    """One process's holding, as the client saw it (and the service, when it says)."""

    process: Process
    invoked: int  # take invocation time
    start: int | None  # take ok time; None when the take's outcome is unknown
    number: int | None  # the token or epoch
    lease: Any
    name: str | None = None  # the lock or election, when the history says
    end: int | None = None  # give invocation or noticed loss; None: held to the end
    ended_by: str = "open"  # released | release-failed | release-unknown | lease-lost | open
    give: Pair | None = None  # the give operation, when there was one
    granted: int | None = None  # the service's grant instant, when it logs grants
    abandoned: int | None = None  # when the runner gave up on the holder (an op ended info)
    late: bool = False  # definite only by the late completion of an abandoned take

    @property
    def definite(self) -> bool:
        return self.start is not None

    @property
    def taken(self) -> int:
        """The best known instant the holding began: the service's grant, else the ok."""
        if self.granted is not None:
            return self.granted
        assert self.start is not None, "only definite holdings have a start"
        return self.start

    def to_dict(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "name": self.name,
            "token": self.number,
            "lease": self.lease,
            "acquired": self.start,
            "granted": self.granted,
            "until": self.end,
            "ended_by": self.ended_by,
            "abandoned": self.abandoned,
            "late": self.late,
        }


@dataclass(frozen=True, slots=True)
class ServiceGrant:
    """One grant in the service's own log: ``name`` given to ``lease`` with ``number``."""

    time: int
    name: str | None
    lease: Any
    number: int | None
    forced: bool = False


def late_completions(events: Iterable[dict[str, Any]]) -> dict[tuple[Process, int], dict[str, Any]]:
    """The runner's ``late-completion`` events, by (process, invocation time)."""
    return {
        (e["process"], int(e["invoked"])): e
        for e in events
        if e.get("event") == "late-completion"
        and e.get("invoked") is not None
        and e.get("process") is not None
    }


def holdings(
    history: History, terms: Terms, late: dict[tuple[Process, int], dict[str, Any]] | None = None
) -> list[Holding]:
    """Every holding of the client history, definite or possible, in invocation order;
    ``late``: the late completions of abandoned operations (``late_completions``)."""
    out: list[Holding] = []
    current: dict[Process, Holding] = {}
    for pair in history.client_ops().pairs():
        inv, comp = pair.invoke, pair.completion
        gave_up = (comp.time if comp is not None else inv.time) if pair.type == "info" else None
        if gave_up is not None and inv.process in current:
            current[inv.process].abandoned = gave_up
        if inv.f in terms.take:
            if pair.type == "fail":
                continue
            val = comp.value if comp is not None and isinstance(comp.value, dict) else {}
            asked = inv.value if isinstance(inv.value, dict) else {}
            start = comp.time if pair.type == "ok" and comp is not None else None
            came = (late or {}).get((inv.process, inv.time)) if pair.type == "info" else None
            if came is not None and came.get("type") == "ok" and isinstance(came["value"], dict):
                val, start = came["value"], int(came["time"])
            number = val.get("token", val.get("epoch"))
            name = val.get("name", asked.get("name"))
            h = Holding(
                inv.process,
                inv.time,
                start,
                number,
                val.get("lease"),
                name,
                abandoned=gave_up,
                late=came is not None and start is not None,
            )
            out.append(h)
            current[inv.process] = h
        elif inv.f in terms.give and inv.process in current:
            h = current.pop(inv.process)
            h.end, h.give = inv.time, pair
            h.ended_by = {"ok": "released", "fail": "release-failed"}.get(
                pair.type, "release-unknown"
            )
    return out


def end_at_loss(held: Iterable[Holding], leases: dict[Any, LeaseFacts]) -> None:
    """Cut each holding at the moment its holder noticed its lease lost, or let it go
    without a release of its own (``ended_by`` the let-go's reason: ``closed`` when its
    worker was stopped)."""
    for h in held:
        facts = leases.get(h.lease)
        if not h.definite or facts is None:
            continue
        for at, why in ((facts.lost_at, "lease-lost"), (facts.let_go_at, facts.let_go_reason)):
            if at is not None and (h.end is None or at < h.end):
                h.end, h.ended_by = at, why or "let go"


def service_grants(service_events: Iterable[dict[str, Any]], terms: Terms) -> list[ServiceGrant]:
    """The service's grants of ``terms``' kind, in log order."""
    return [
        ServiceGrant(
            int(e["time"]),
            e.get(terms.service_key),
            e.get("lease"),
            e.get(terms.number),
            bool(e.get("forced")),
        )
        for e in service_events
        if e.get("event") == terms.service_grant
    ]


def attach_grants(held: Iterable[Holding], grants: Sequence[ServiceGrant]) -> None:
    """Copy the service's grant instant onto each holding it matches (same lease and
    name; the first grant to that lease after the take was invoked)."""
    by_lease: dict[Any, list[ServiceGrant]] = {}
    for g in grants:
        by_lease.setdefault(g.lease, []).append(g)
    for h in held:
        for g in by_lease.get(h.lease, ()):
            if _same_grant(g, h) and g.time >= h.invoked:
                h.granted = g.time
                break


def _same_grant(g: ServiceGrant, h: Holding) -> bool:
    """Whether the service's grant ``g`` (to ``h``'s lease) is of ``h``'s name: the same
    name, or the name under the run's key prefix with ``h``'s number (a lock of one's own
    asks the service for ``prefix/name``: ``workloads.lock.own``). Without it, the order
    of the answers stands in for the service's order of its grants, and an answer that
    arrived late (a loaded worker) reads as a grant made after a later one."""
    if g.name in (None, h.name):
        return True
    prefixed = h.name is not None and g.name.endswith(f"/{h.name}")
    return prefixed and g.number is not None and g.number == h.number


def holding_at(
    process: Process, t: int, held: Sequence[Holding], name: str | None = None
) -> Holding | None:
    """``process``'s latest holding (of ``name``, when given) begun before ``t``."""
    mine = [x for x in held if x.process == process and x.invoked <= t and x.name in (None, name)]
    return max(mine, key=lambda x: x.invoked) if mine else None


def successors(h: Holding, held: Sequence[Holding]) -> list[Holding]:
    """Later definite holdings of the same name by other processes, by start."""
    later = [
        x
        for x in held
        if x.definite and x.process != h.process and x.name == h.name and x.taken > h.taken
    ]
    return sorted(later, key=lambda x: x.taken)
