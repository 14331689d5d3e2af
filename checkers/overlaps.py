"""The analysis behind mutual exclusion: overlapping holdings, stale writes, handovers.

Pure data, no verdict and no prose (``checkers.mutex`` and ``checkers.election`` judge and
explain it). From a run's records:

- **overlaps**: every pair of holdings of the same name whose holders both believed they
  held it at once (the later one's ``ok`` before the earlier one's believed end), with the
  time both believed it and the three-way split of the earlier lease at the takeover
  (``checkers.classify.lease_kind``);
- **groups**: the same overlaps gathered per earlier (stale) holding: one entry for "process
  2 believed it held lock-0 from 11.98 s to 26.34 s while 17 later holdings happened", with
  its cause and what its writes did at the resource after the takeover;
- **stale writes**: a write is stale when its token is lower than the highest the resource
  had seen (``token``), or, when the token could not tell (none, or not lower),
  when another process had been granted the same name after the writer and before the
  write arrived (``unfenced``, ``superseded``);
- **handovers**: for each holding that ended without a release and was followed by
  another holder: the lease expiry (the service's logged deadline when it keeps a log, else
  the last acknowledgement + TTL) and the latest end the service's documented rule allows
  after it (``checkers.expiry``: the same instant but for a service that may keep a lease
  past its deadline, as Consul up to twice its TTL), the *danger window* (the stale
  holder's last write arrival minus the expiry, or 0) and the *handover delay*: how far
  the next grant came outside the rule's window (after its latest end, or before the
  expiry, negative; 0 within it), beside the next grant minus the expiry
  (``after_expiry_s``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.attribution import LibraryRecord
from checkers.blame import attributed
from checkers.classify import (
    ABANDONED,
    EXPIRED,
    Classification,
    Takeover,
    classify_accepted,
    classify_takeover,
    lease_kind,
)
from checkers.durability import DurabilityRule
from checkers.expiry import AT_DEADLINE, ExpiryRule
from checkers.foreign_release import foreign_releases
from checkers.holdings import (
    Holding,
    Terms,
    attach_grants,
    end_at_loss,
    holding_at,
    holdings,
    late_completions,
    service_grants,
    successors,
)
from checkers.leases import LeaseFacts, lease_facts
from checkers.refusals import NOT_GRANTED
from checkers.windows import FaultWindow
from checkers.words import seconds
from core.history import History

_KIND_ORDER = {"lease-valid": 0, "lease-unknown": 1, "lease-expired": 2}


@dataclass(slots=True)
class StaleWrite:
    """A write that reached the resource from a holder that had been superseded."""

    kind: str  # token | unfenced | superseded
    write: dict[str, Any]
    holding: Holding | None
    cause: Classification | None = None  # why it was accepted (accepted writes only)

    @property
    def accepted(self) -> bool:
        return bool(self.write.get("accepted"))

    @property
    def time(self) -> int:
        return int(self.write["time"])


@dataclass(slots=True)
class Group:
    """One stale holding and every later holding that overlapped it."""

    first: Holding
    later: list[Holding]
    pairs: list[dict[str, Any]]
    kind: str
    takeover: Takeover
    writes_after: list[dict[str, Any]] = field(default_factory=list)
    harm: Classification | None = None  # why its stale writes were accepted, if any were
    run_end: int = 0
    handover: dict[str, Any] | None = None  # expiry, danger window and handover delay

    @property
    def taken_over_at(self) -> int:
        return self.later[0].taken

    @property
    def believed_after_s(self) -> float | None:
        """How long the stale holder went on believing it held after the takeover."""
        end = self.first.end if self.first.end is not None else self.run_end
        return seconds(max(0, end - self.taken_over_at))

    @property
    def both_s(self) -> float | None:
        """How long, in all, it believed it held while a later holder did too (the union
        of the pairs' overlaps)."""
        return both_believed_s(self.pairs)

    @property
    def undecided(self) -> bool:
        """The overlap cannot be judged: nothing says when the earlier lease ended, or the
        harness had abandoned the earlier holder (its own doing, not the service's)."""
        return self.kind == "lease-unknown" or self.takeover.classification.cause == ABANDONED

    @property
    def violates(self) -> bool:
        """A broken mutual exclusion: the lease was valid by the service's account, or a
        stale write got through - unless all that explains it is the harness having
        abandoned the holder (undecided: the run is unknown, not invalid)."""
        harmed = self.harm is not None and self.harm.cause != ABANDONED
        return (self.kind == "lease-valid" and not self.undecided) or harmed


@dataclass(slots=True)
class Analysis:
    """Everything ``analyse`` found, for a checker to judge and explain."""

    terms: Terms
    held: list[Holding]
    writes: list[dict[str, Any]]
    leases: dict[Any, LeaseFacts]
    windows: Sequence[FaultWindow]
    run_end: int
    overlaps: list[dict[str, Any]]
    groups: list[Group]
    stale: list[StaleWrite]
    handovers: list[dict[str, Any]]
    foreign: list[dict[str, Any]] = field(default_factory=list)
    """Releases called after the lock had gone to another (``checkers.foreign_release``)."""

    @property
    def lease_valid_groups(self) -> list[Group]:
        return [g for g in self.groups if g.kind == "lease-valid"]


def analyse(
    resource_log: Iterable[dict[str, Any]],
    history: History,
    events: Iterable[dict[str, Any]],
    service_events: Iterable[dict[str, Any]],
    windows: Sequence[FaultWindow],
    terms: Terms,
    rule: ExpiryRule = AT_DEADLINE,
    durability: DurabilityRule | None = None,
    library: LibraryRecord | None = None,
) -> Analysis:
    """Read holdings, leases and writes and find overlaps, stale writes and handovers;
    ``rule``: when the service ends a lease no one renews (``checkers.expiry``);
    ``durability``: what a power cut may take (``checkers.durability``); ``library``: the
    run's lock library, whose promises each takeover is held to (``checkers.blame``)."""
    service = list(service_events)
    writes = sorted(resource_log, key=lambda w: int(w["time"]))
    events = list(events)
    leases = lease_facts(events, service, rule)
    everything = holdings(history, terms, late_completions(events))
    end_at_loss(everything, leases)
    held = [h for h in everything if h.definite]
    attach_grants(held, service_grants(service, terms))
    run_end = max([history[-1].time if len(history) else 0] + [int(w["time"]) for w in writes])
    takeovers: dict[int, Takeover] = {}

    def takeover(h: Holding, at: int) -> Takeover:
        """The classification of ``h``'s takeover, computed once per holding: at the
        worst overlapping grant when it has a group (groups are built first), else at
        ``at``."""
        if id(h) not in takeovers:
            facts = leases.get(h.lease)
            t = classify_takeover(h, facts, at, windows, durability, held, leases)
            takeovers[id(h)] = attributed(t, h, at, facts, library)
        return takeovers[id(h)]

    pairs = _pairs(held, leases, writes, run_end)
    groups = _groups(pairs, writes, held, takeover, run_end)
    stale = [s for w in writes if (s := _stale(w, held)) is not None]
    for s in stale:
        if s.accepted and s.holding is not None:
            nxt = successors(s.holding, held)
            granted = (s.holding.taken, nxt[0].taken if nxt else s.time)
            numbers = (s.holding.number, nxt[0].number if nxt else None)
            s.cause = classify_accepted(
                s.kind,
                takeover(s.holding, granted[1]).classification,
                terms.number,
                granted,
                windows,
                numbers,
                durability,
            )
    for g in groups:
        causes = [s.cause for s in stale if s.cause is not None and s.holding is g.first]
        # a reused number explains more than the takeover does: prefer it
        g.harm = min(causes, key=lambda c: c.cause in EXPIRED, default=None)
    by_holding = {id(x): h for x in held if (h := _handover(x, held, leases, writes, takeover))}
    for g in groups:
        g.handover = by_holding.get(id(g.first))
    handovers = list(by_holding.values())
    refused = [
        (p.invoke.process, p.invoke.time, p.end or p.invoke.time)
        for p in history.client_ops().pairs()
        if p.invoke.f in terms.take
        and p.completion is not None
        and p.completion.type == "fail"
        and (p.completion.error or "").startswith(NOT_GRANTED)
    ]
    foreign = foreign_releases(held, leases, refused, library)
    return Analysis(
        terms,
        held,
        writes,
        leases,
        windows,
        run_end,
        [p for _, _, p in pairs],
        groups,
        stale,
        handovers,
        foreign,
    )


# --- overlaps ----------------------------------------------------------------------------


def both_believed_s(pairs: Iterable[dict[str, Any]]) -> float | None:
    """The time, in all, during which at least two holders believed they held (the union
    of the pairs' overlaps), in seconds."""
    total, reach = 0, None
    for lo, hi in sorted((p["both_from"], p["both_until"]) for p in pairs):
        if reach is not None and lo < reach:
            lo = reach
        if hi > lo:
            total += hi - lo
        reach = hi if reach is None else max(reach, hi)
    return seconds(total)


def _pairs(
    held: list[Holding],
    leases: dict[Any, LeaseFacts],
    writes: list[dict[str, Any]],
    run_end: int,
) -> list[tuple[Holding, Holding, dict[str, Any]]]:
    """Every (earlier, later) pair of holdings both holders believed in at once: in their
    own view (``both_from``..``both_until``, ``overlap_s``) and at the resource (the
    earlier holder's writes that arrived while the later one held it, ``at_resource``).
    Earlier and later in the order of the grants (``Holding.taken``: the service's, when
    it logs them): an answer that arrived late does not make its grant the later one."""
    ordered = sorted(held, key=lambda h: h.taken)
    out = []
    for i, first in enumerate(ordered):
        assert first.start is not None
        first_end = first.end if first.end is not None else max(run_end, first.start)
        mine = own_writes(first, held, writes)
        for later in ordered[i + 1 :]:
            if later.process == first.process or later.name != first.name:
                continue
            assert later.start is not None
            later_end = later.end if later.end is not None else run_end
            if first.end is not None and not later.start < first.end:
                continue
            if not first.start < later_end:
                continue
            both_from = max(first.start, later.start)
            both_until = min(first_end, later_end)
            landed = [w for w in mine if later.taken <= int(w["time"]) <= later_end]
            out.append(
                (
                    first,
                    later,
                    {
                        "kind": lease_kind(leases.get(first.lease), later.taken),
                        "first": first.to_dict(),
                        "later": later.to_dict(),
                        "both_from": both_from,
                        "both_until": both_until,
                        "overlap_s": seconds(max(0, both_until - both_from)),
                        "at_resource": [
                            {
                                "time": w["time"],
                                "token": w.get("token"),
                                "accepted": bool(w.get("accepted")),
                            }
                            for w in landed
                        ],
                    },
                )
            )
    return out


def _groups(
    pairs: list[tuple[Holding, Holding, dict[str, Any]]],
    writes: list[dict[str, Any]],
    held: list[Holding],
    takeover: Callable[[Holding, int], Takeover],
    run_end: int,
) -> list[Group]:
    by_first: dict[int, list[tuple[Holding, Holding, dict[str, Any]]]] = {}
    for p in pairs:
        by_first.setdefault(id(p[0]), []).append(p)
    out = []
    for ps in by_first.values():
        first = ps[0][0]
        later = sorted((p[1] for p in ps), key=lambda h: h.taken)
        worst = min(ps, key=lambda p: (_KIND_ORDER[p[2]["kind"]], p[1].taken))
        g = Group(
            first, later, [p[2] for p in ps], worst[2]["kind"], takeover(first, worst[1].taken)
        )
        own = own_writes(first, held, writes)
        g.writes_after = [w for w in own if int(w["time"]) >= g.taken_over_at]
        g.run_end = run_end
        out.append(g)
    return sorted(out, key=lambda g: g.taken_over_at)


# --- stale writes ------------------------------------------------------------------------


def _stale(w: dict[str, Any], held: list[Holding]) -> StaleWrite | None:
    token, highest = w.get("token"), w.get("highest_before")
    mine = holding_at(w["writer"], int(w["time"]), held, w.get("resource"))
    if token is not None and highest is not None and token < highest:
        return StaleWrite("token", w, mine)
    if mine is None:
        return None
    t = int(w["time"])
    superseded = any(x.taken < t for x in successors(mine, held))
    if not superseded:
        return None
    return StaleWrite("unfenced" if token is None else "superseded", w, mine)


def own_writes(h: Holding, held: list[Holding], writes: list[dict[str, Any]]) -> list[dict]:
    """The writes ``h``'s process made under ``h`` (until its next holding began)."""
    until = min(
        (x.invoked for x in held if x.process == h.process and x.invoked > h.invoked), default=None
    )
    return [
        w
        for w in writes
        if w.get("writer") == h.process
        and int(w["time"]) >= h.invoked
        and (until is None or int(w["time"]) < until)
        and h.name in (None, w.get("resource"))
    ]


# --- handovers ---------------------------------------------------------------------------


def _handover(
    h: Holding,
    held: list[Holding],
    leases: dict[Any, LeaseFacts],
    writes: list[dict[str, Any]],
    takeover: Callable[[Holding, int], Takeover],
) -> dict[str, Any] | None:
    """Expiry, danger window and handover delay after ``h`` ended without a release (a
    holder that let its lease go, its worker closing, handed over as by a release)."""
    if h.ended_by in ("released", "closed"):
        return None
    nexts = successors(h, held)
    if not nexts:
        return None
    nxt = nexts[0]
    facts = leases.get(h.lease, LeaseFacts())
    expiry, latest, source = facts.expiry_window(before=nxt.taken)
    arrivals = [int(w["time"]) for w in own_writes(h, held, writes)]
    late = [a for a in arrivals if expiry is not None and a > expiry]
    t: Takeover = takeover(h, nxt.taken)
    return {
        "process": h.process,
        "name": h.name,
        "token": h.number,
        "lease": h.lease,
        "ended_by": h.ended_by,
        "lease_expiry": expiry,
        "lease_expiry_latest": latest,
        "lease_expiry_source": source,
        "expiry_rule": facts.rule.to_dict() if latest != expiry else None,
        "last_write_arrival": max(arrivals) if arrivals else None,
        "danger_window_s": None if expiry is None else seconds(max(late) - expiry) if late else 0.0,
        "next_process": nxt.process,
        "next_token": nxt.number,
        "next_acquired": nxt.taken,
        "after_expiry_s": None if expiry is None else seconds(nxt.taken - expiry),
        "handover_delay_s": _outside(nxt.taken, expiry, latest),
        "kind": t.kind,
        "classification": t.classification.to_dict(),
    }


def _outside(t: int, lo: int | None, hi: int | None) -> float | None:
    """How far ``t`` is outside ``[lo, hi]`` in seconds: after ``hi`` positive, before
    ``lo`` negative, 0 within (None: no window)."""
    if lo is None or hi is None:
        return None
    return seconds(t - hi if t > hi else t - lo if t < lo else 0)
