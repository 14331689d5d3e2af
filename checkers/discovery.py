"""Service registration: a dead instance must disappear from discovery within its TTL plus
the service's documented grace; what else the run measured is reported with its cause.

From the membership timeline (``checkers.membership``):

- **violation** (invalid): a listing asked for more than TTL + grace (+ half a second for
  a renewal in flight at the death, ``checkers.membership.IN_FLIGHT_S``) after a member died
  (its process frozen or killed, proven by the fault) that still lists it, while it was
  still dead. The listing is the service's own answer: the evidence.
- **detection time** per death lasting past the deadline: from the death to the answer
  of the first listing without it, the latest over the discovery clients (the time until
  *every* client stopped listing it). A death no discovery client could observe after the
  deadline makes the run unknown, with the reason.
- **removals of live instances**: listings that lack a member whose process runs (after
  its first registration), in episodes, each with its cause: its own pause outlasted the
  TTL (expected, not a bug), a fault on the service (words of the window: the instance
  may have been cut off), its keepalives failing, or unexplained; the last two are the
  *false removals* (a live, reachable instance dropped). Reported, not judged: a live
  instance dropped while renewing is worth a look but not proof of a bug (a keepalive
  may have been slow).
- **stale listings**: a listing that still shows a dead member another discovery client
  already saw removed (a client on a node cut off from the majority).
- **recovery**: after a pause ends, the time to the instance's next registration and to
  its first listing again.
- **moved sessions**: an instance whose session reconnected to another server (its own
  killed or cut off) kept its registration through the fault: named, with the fault, so a
  fault that removed no one is not read as a removal the service failed to make.
"""

from __future__ import annotations

from typing import Any, Final

from checkers.anomalies import KEY, Anomaly, Invocations, Involved, named
from checkers.membership import IN_FLIGHT_S, PAUSED, Death, Listing, Move, Timeline, timeline
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.shrink_ops import named_violations, shrink_result
from checkers.windows import CRASHES, CUTS_OFF, FREEZES_CLIENT, KILLS_CLIENT
from checkers.words import NS, listing, plural, secs

NAME: Final = "discovery"
EXPECTED, DURING_FAULT, KEEPALIVE, UNEXPLAINED = (
    "expected",
    "during-fault",
    "keepalive",
    "unexplained",
)
FALSE: Final = frozenset({KEEPALIVE, UNEXPLAINED})
"""Kinds of removal of a live instance counted as false removals: a live instance that
nothing cut off from the service, dropped (a fault on the servers is reported apart)."""
SERVICE_FAULTS: Final = frozenset({CUTS_OFF, CRASHES})
"""Effects of faults on the service's servers, after which a TTL counts afresh."""


def check_record(record: RunRecord) -> CheckResult:
    """Judge a registry run (see the module docstring); an invalid result carries its
    first violation's fewest operations (``shrunk``, ``checkers.shrink_ops``: the dead
    member's registration and the listing that still showed it)."""
    return shrink_result(judged(record), record, judged, violations)


violations: Final = named_violations
"""The violations a result of this checker names (its named anomalies)."""


def judged(record: RunRecord) -> CheckResult:
    """The discovery result of ``record``, without its shrink."""
    t = timeline(record)
    if not t.process_of:
        return CheckResult(NAME, UNKNOWN, "no instance ever registered: nothing was tested")
    if not t.listings:
        return CheckResult(NAME, UNKNOWN, "no discovery client ever listed the members")
    deadline = t.deadline_s
    assert deadline is not None and t.ttl is not None
    deaths = [_judge(t, d, deadline) for d in t.deaths]
    late = [d for d in deaths if d["violation"] is not None]
    unobserved = [d for d in deaths if d["expected_removal"] and d["detection_s"] is None]
    removals = live_removals(t)
    unexpected = [r for r in removals if r["kind"] in FALSE]
    valid: Validity = False if late else (UNKNOWN if unobserved else True)
    summary = _summary(t, deaths, late, unobserved, unexpected, deadline)
    index = Invocations(record.history)
    details: dict[str, Any] = {
        KEY: [_anomaly(d, index).to_dict() for d in late],
        "ttl_s": t.ttl,
        "grace_s": t.grace,
        "deadline_s": deadline,
        "members": sorted(t.process_of),
        "deaths": deaths,
        "detection_s": [d["detection_s"] for d in deaths if d["detection_s"] is not None],
        "violations": [d["violation"] for d in late],
        "live_removals": removals,
        "false_removals": len(unexpected),
        "stale_listings": stale_listings(t),
        "abandoned": {m: at for m, at in t.abandoned.items()},
        "session_moves": [_move_dict(t, m) for m in t.moves],
    }
    return CheckResult(NAME, valid, summary, details)


def _anomaly(death: dict[str, Any], index: Invocations) -> Anomaly:
    """A death's violation named: the dead member, and the listing that still showed it."""
    v = death["violation"]
    x = v["listing"]
    return Anomaly(
        "dead-instance-listed",
        named("dead-instance-listed", v["sentence"]),
        (
            Involved(
                "listing",
                x["process"],
                index(x["process"], x["invoke"]),
                x["invoke"],
                what=f"listed {death['member']}",
            ),
        ),
        key=death["member"],
    )


def _judge(t: Timeline, d: Death, deadline: float) -> dict[str, Any]:
    """One death: its detection time, the violation if any, its recovery."""
    limit = d.start + int(deadline * NS)
    until = d.end if d.end is not None else t.end
    gone: dict[Any, int] = {}
    late: Listing | None = None
    for x in t.listings:
        if x.invoke < d.start or x.invoke >= until:
            continue
        if d.member not in x.members:
            gone.setdefault(x.process, x.time)
        elif late is None and _past(t, d.start, x.invoke, deadline):
            late = x
    observers = {x.process for x in t.listings if d.start <= x.invoke < until}
    expected = until > limit
    detected = len(gone) == len(observers) and bool(observers)
    detection = (max(gone.values()) - d.start) / NS if detected else None
    out: dict[str, Any] = {
        "member": d.member,
        "process": d.process,
        "kind": d.kind,
        "died": d.start,
        "until": d.end,
        "words": d.words,
        "expected_removal": expected,
        "detection_s": detection,
        "per_client_s": {str(p): (at - d.start) / NS for p, at in sorted(gone.items(), key=str)},
        "violation": None,
    }
    if late is not None:
        out["violation"] = {
            "member": d.member,
            "listing": {"process": late.process, "node": late.node, "invoke": late.invoke},
            "after_s": (late.invoke - d.start) / NS,
            "sentence": (
                f"{d.member} ({d.words}) was still listed by process {late.process}"
                f"{_on(late.node)} at {secs(late.invoke)}, "
                f"{(late.invoke - d.start) / NS:.3f} s after it died: longer than its "
                f"TTL {t.ttl:g} s + the service's grace {t.grace:g} s (+ {IN_FLIGHT_S:g} s "
                "for a renewal in flight)"
            ),
        }
    if d.kind == PAUSED and d.end is not None:
        out.update(_recovery(t, d))
    return out


def _past(t: Timeline, start: int, at: int, deadline: float) -> bool:
    """Whether a listing asked at ``at`` is past the deadline of a death at ``start``."""
    restart = _restart(t, start, at)
    return restart is not None and at > restart + int(deadline * NS)


def _restart(t: Timeline, start: int, at: int) -> int | None:
    """When the service last became whole between a death at ``start`` and a listing at
    ``at``: the end of the last fault on its servers (a new leader gives every lease or
    session a full TTL again: etcd's ``Promote``, ZooKeeper's session tracker), else
    ``start``; None while such a fault is still on (no deadline runs then)."""
    restart = start
    for w in t.windows:
        if w.effects & SERVICE_FAULTS and w.overlaps(start, at):
            if w.end is None or w.end > at:
                return None
            restart = max(restart, w.end)
    return restart


def _recovery(t: Timeline, d: Death) -> dict[str, Any]:
    """After a pause: the time to the next registration and to the first listing again."""
    assert d.end is not None
    again = [r for r in t.registered.get(d.member, []) if r >= d.end]
    shown = [x.time for x in t.listings if x.invoke >= d.end and d.member in x.members]
    return {
        "reregistered_s": (again[0] - d.end) / NS if again else None,
        "relisted_s": (shown[0] - d.end) / NS if shown else None,
    }


def live_removals(t: Timeline) -> list[dict[str, Any]]:
    """Episodes of one discovery client's listings that lack a member whose process runs,
    each with its cause (per client: clients on both sides of a partition disagree)."""
    out: list[dict[str, Any]] = []
    for member in t.process_of:
        first = min(t.registered[member])
        stop = min([t.abandoned.get(member, t.end), *_kills(t, member)])
        for client in t.discoverers():
            episode: list[Listing] = []
            for x in (x for x in t.listings if x.process == client):
                absent = member not in x.members and first < x.invoke and x.time < stop
                if absent and not _frozen(t, member, x.invoke, x.time):
                    episode.append(x)
                elif episode and member in x.members:
                    out.append(_episode(t, member, episode))
                    episode = []
            if episode:
                out.append(_episode(t, member, episode))
    return sorted(out, key=lambda e: e["from"])


def _kills(t: Timeline, member: str) -> list[int]:
    return [d.start for d in t.deaths if d.member == member and d.end is None]


def _frozen(t: Timeline, member: str, lo: int, hi: int) -> bool:
    return any(
        d.member == member and d.start <= hi and (d.end is None or d.end >= lo) for d in t.deaths
    )


def _episode(t: Timeline, member: str, listings: list[Listing]) -> dict[str, Any]:
    lo, hi = listings[0].invoke, listings[-1].time
    kind, cause = _cause(t, member, lo, hi)
    return {
        "member": member,
        "from": lo,
        "to": hi,
        "listings": len(listings),
        "clients": sorted({str(x.process) for x in listings}),
        "kind": kind,
        "expected": kind == EXPECTED,
        "cause": cause,
    }


def _cause(t: Timeline, member: str, lo: int, hi: int) -> tuple[str, str]:
    """Why a running member was not listed in ``[lo, hi]``: its kind (``EXPECTED``,
    ``DURING_FAULT``, ``KEEPALIVE``, ``UNEXPLAINED``) and the words."""
    assert t.ttl is not None and t.grace is not None
    for d in reversed(t.deaths):
        if d.member == member and d.end is not None and d.end <= lo:
            again = [r for r in t.registered.get(member, []) if d.end <= r <= lo]
            if not again:
                paused = (d.end - d.start) / NS
                return EXPECTED, (
                    f"after its pause ({d.words}, {paused:.3f} s) its registration had "
                    f"lapsed (TTL {t.ttl:g} s) and it had not registered again yet: expected"
                )
            break
    window = lo - int((t.ttl + t.grace) * NS)
    for w in t.windows:
        if w.overlaps(window, hi) and not w.effects & {FREEZES_CLIENT, KILLS_CLIENT}:
            return DURING_FAULT, f"during {w.describe()}"
    if any(window <= u <= hi for u in t.unregistered.get(member, [])):
        return KEEPALIVE, "its keeper found the registration lost (keepalives not acknowledged)"
    return UNEXPLAINED, "unexplained: no fault and no failed keepalive recorded before it"


def stale_listings(t: Timeline) -> list[dict[str, Any]]:
    """Listings that still show a dead member after another client saw it removed."""
    out: list[dict[str, Any]] = []
    for d in t.deaths:
        until = d.end if d.end is not None else t.end
        removed: int | None = None
        for x in sorted(t.listings, key=lambda x: x.time):
            if not d.start <= x.invoke < until:
                continue
            if d.member not in x.members:
                removed = x.time if removed is None else removed
            elif removed is not None and x.invoke > removed:
                out.append(
                    {"member": d.member, "process": x.process, "node": x.node, "at": x.invoke}
                )
    return out


def _move_dict(t: Timeline, m: Move) -> dict[str, Any]:
    return {
        "member": m.member,
        "time": m.time,
        "from": m.was,
        "to": m.server,
        "connection_lost": m.lost,
        "sentence": move_sentence(t, m),
    }


def move_sentence(t: Timeline, m: Move) -> str:
    """``i3's session moved from n1 to n2 at 12.345 s (its connection lost at 11.9 s,
    during ...): the session, and its registration, lived on``."""
    lo = m.lost if m.lost is not None else m.time
    fault = next((w for w in t.windows if w.overlaps(lo, m.time)), None)
    why = [f"its connection lost at {secs(m.lost)}"] if m.lost is not None else []
    why += [f"during {fault.describe()}"] if fault is not None else []
    said = f" ({', '.join(why)})" if why else ""
    return (
        f"{m.member}'s session moved from {m.was} to {m.server} at {secs(m.time)}{said}: "
        "the session, and its registration, lived on"
    )


def _moves_sentence(t: Timeline) -> str:
    """The moved sessions, the first few in full."""
    shown = [move_sentence(t, m) for m in t.moves[:3]]
    more = len(t.moves) - len(shown)
    text = "; ".join(shown) + (f"; and {plural(more, 'more move')}" if more else "")
    members = sorted({m.member for m in t.moves})
    head = f"{plural(len(t.moves), 'session move')} ({listing(members)}): "
    return head + text + "."


def _on(node: str | None) -> str:
    return f" (asking {node})" if node else ""


def _summary(
    t: Timeline,
    deaths: list[dict[str, Any]],
    violations: list[dict[str, Any]],
    unobserved: list[dict[str, Any]],
    unexpected: list[dict[str, Any]],
    deadline: float,
) -> str:
    head = (
        f"{plural(len(t.process_of), 'member')}, {plural(len(t.listings), 'listing')} by "
        f"{plural(len(t.discoverers()), 'discovery client')}; deadline TTL {t.ttl:g} s + "
        f"grace {t.grace:g} s + {IN_FLIGHT_S:g} s for a renewal in flight = {deadline:g} s."
    )
    if violations:
        return f"{head} {violations[0]['violation']['sentence']}."
    if unobserved:
        return (
            f"{head} {unobserved[0]['member']} died ({unobserved[0]['words']}) but no "
            "discovery client listed the members after the deadline: detection unknown."
        )
    detected = [d["detection_s"] for d in deaths if d["detection_s"] is not None]
    parts = [head]
    if detected:
        parts.append(
            f"{plural(len(detected), 'dead instance')} removed from every listing in "
            + ", ".join(f"{s:.3f} s" for s in detected)
            + "."
        )
    else:
        parts.append("No instance died long enough to be removed.")
    if unexpected:
        parts.append(
            f"{plural(len(unexpected), 'live instance')} dropped ({unexpected[0]['cause']})."
        )
    if t.moves:
        parts.append(_moves_sentence(t))
    return " ".join(parts)
