"""Lock holdings, lease lifetimes and resource writes, as intervals and marks to draw.

What the clients believed and what the leases did, for the timeline; the verdict is
``checkers.mutex``'s, and the reading of the records is the checkers' own
(``checkers.holdings``, ``checkers.leases``), so the picture and the verdict agree.

A holding runs from its ``acquire`` (``campaign``) ``ok`` to the holder's ``release``
(``resign``) invocation, the moment it noticed its lease lost or the moment it let it go
(its worker closing). A lease is drawn from
its grant: solid while it was certainly alive, faint while it may have been (between the
earliest and the latest moment it can have ended), and cut at its release.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from checkers.holdings import (
    EITHER,
    ELECTION,
    LOCK,
    Holding,
    Terms,
    end_at_loss,
    holdings,
    late_completions,
    recorded_terms,
)
from checkers.leases import LeaseFacts, lease_facts
from core.history import History
from core.ops import Process


@dataclass(frozen=True, slots=True)
class LeaseSpan:
    """One lease on the timeline: granted, certainly alive until ``sure_until``, perhaps
    until ``maybe_until`` (None: to the end of the run), loss noticed at ``lost_at``."""

    lease: Any
    process: Process
    granted: int
    sure_until: int
    maybe_until: int | None
    lost_at: int | None


def terms_of(history: History, test: dict[str, Any]) -> Terms | None:
    """The words and operations of a run's holdings: as its workload declared them
    (test.json's ``holder``: ``checkers.holdings.recorded_terms``), the checkers' own;
    None when it has no numbered holdings to draw. A run recorded before the declaration
    is read by the operations its clients recorded: an election's (leader, epoch) when
    they campaigned, else a lock's (holder, token)."""
    terms = recorded_terms(test)
    if terms is not EITHER:
        return terms
    return ELECTION if any(op.f in ELECTION.take for op in history) else LOCK


def words(terms: Terms) -> dict[str, Any]:
    """The words the page's scripts put in the timeline's and the cursor's sentences."""
    return {
        "number": terms.number,
        "holder": terms.holder,
        "prize": terms.prize,
        "tenure": terms.tenure,
        "take": list(terms.take),
    }


def held(
    history: History,
    events: Iterable[dict[str, Any]],
    service_events: Iterable[dict[str, Any]] = (),
    terms: Terms | None = EITHER,
) -> tuple[list[Holding], dict[Any, LeaseFacts]]:
    """The definite holdings of ``terms``' operations (None: the run has none; cut where
    their holder noticed its lease lost) and the facts of every lease."""
    events = list(events)
    facts = lease_facts(events, service_events)
    found = holdings(history, terms, late_completions(events)) if terms is not None else []
    taken = [h for h in found if h.definite]
    end_at_loss(taken, facts)
    return taken, facts


def lease_spans(taken: list[Holding], facts: dict[Any, LeaseFacts]) -> list[LeaseSpan]:
    """Every lease whose process is known, in order of grant."""
    released = {
        h.lease: h.give.completion.time
        for h in taken
        if h.give is not None and h.give.completion is not None and h.give.completion.type == "ok"
    }
    out = []
    for lease, f in facts.items():
        starts = [r for _, r in f.acks] + f.renewed
        if f.process is None or not starts:
            continue
        granted = min(starts)
        bounds = f.end_bounds()
        lo, hi = bounds if bounds is not None else (max(starts), max(starts))
        cut = released.get(lease)
        if cut is not None:
            lo, hi = min(lo, cut), cut if hi is None else min(hi, cut)
        if f.lost_at is not None:  # gone by the time its holder noticed
            lo, hi = min(lo, f.lost_at), f.lost_at if hi is None else min(hi, f.lost_at)
        lo = max(granted, lo)
        out.append(LeaseSpan(lease, f.process, granted, lo, hi, f.lost_at))
    return sorted(out, key=lambda s: s.granted)


def stale_write_keys(mutex_result: dict[str, Any] | None) -> set[tuple[int, Any]]:
    """``(arrival, writer)`` of every write the mutex checker called stale."""
    if not mutex_result:
        return set()
    out = set()
    for s in [*mutex_result.get("stale_accepted", ()), *mutex_result.get("stale_rejected", ())]:
        w = s.get("write") or {}
        if isinstance(w.get("time"), int):
            out.add((w["time"], w.get("writer")))
    return out


def is_stale(write: dict[str, Any], flagged: set[tuple[int, Any]]) -> bool:
    """Stale when the checker said so, or when its token is below the highest seen."""
    if (write.get("time"), write.get("writer")) in flagged:
        return True
    token, highest = write.get("token"), write.get("highest_before")
    return isinstance(token, int) and isinstance(highest, int) and token < highest
