"""Shrinking a lock run's violation: the fewest holdings and writes that still show it.

A mutual-exclusion or fencing violation rests on a few holdings (who held the lock, with
which token, when) and a few writes at the resource; a run has hundreds. The shrink keeps
every fault, every client event and every service event but the grants, and drops:

1. whole holdings (``delta debugging``, ``checkers.ddmin``): one process's take with its
   give and every operation of that process until its next take, the writes it made in
   that time and the service's grant to its lease. A holding is dropped with everything
   that makes it, so what is left never has a write without its writer's holding nor a
   holding cut short;
2. then single writes of the holdings kept.

A candidate still shows the violation when the checker itself (``judge``, the same
function whose result is being shrunk) names an anomaly of the same kind with the same
participants (role, process, time and words: the same holdings, tokens and writes) as
the result's first anomaly: dropping records may make another story (a write alone is
stale against a later holding only when that holding is kept), and that one is refused.
The result is checked once more by the checker, whole, before it is given; it is
1-minimal (no holding or write of it can be dropped) unless its time or its memory ran
out first (``checkers.shrinking``): then it is the smallest candidate the checker showed
the violation in, said not minimal and why.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from checkers.anomalies import KEY
from checkers.ddmin import ddmin
from checkers.holdings import Terms
from checkers.record import RunRecord
from checkers.result import CheckResult
from checkers.shrinking import Judge, Search
from core.history import History
from core.ops import NEMESIS


@dataclass(frozen=True, slots=True)
class Unit:
    """One holding and what makes it: positions of its operations in the history, of
    its writes in the resource log and of its grants in the service's events. A write
    or a grant that belongs to no holding is a unit of its own."""

    ops: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    grants: tuple[int, ...] = ()


def units_of(record: RunRecord, terms: Terms) -> list[Unit]:
    """The holdings of ``record`` as units (see the module docstring), in history order,
    then the writes and grants no holding claims."""
    history, writes = record.history, record.resource_log
    segments: dict[Any, list[list[int]]] = {}  # process -> its holdings' op positions
    for i, op in enumerate(history):
        if op.process == NEMESIS:
            continue
        mine = segments.setdefault(op.process, [])
        if not mine or (op.type == "invoke" and op.f in terms.take):
            mine.append([])
        mine[-1].append(i)
    found: list[tuple[Any, int, Any, list[int]]] = []  # process, take time, lease, ops
    for process, segs in segments.items():
        found += [(process, history[seg[0]].time, _lease(history, seg), seg) for seg in segs]
    found.sort(key=lambda f: f[3][0])
    by_process = _Current((p, start, k) for k, (p, start, _, _) in enumerate(found))
    by_lease = _Current((lease, start, k) for k, (_, start, lease, _) in enumerate(found) if lease)
    claimed_w: dict[int, list[int]] = {}
    for w_at, w in enumerate(writes):
        owner = by_process.at(w.get("writer"), int(w["time"]))
        if owner is not None:
            claimed_w.setdefault(owner, []).append(w_at)
    claimed_g: dict[int, list[int]] = {}
    free_grants = []
    for g_at, e in enumerate(record.service_events):
        if e.get("event") != terms.service_grant:
            continue
        owner = by_lease.at(e.get("lease"), int(e["time"]))
        if owner is None:
            free_grants.append(g_at)
        else:
            claimed_g.setdefault(owner, []).append(g_at)
    units = [
        Unit(tuple(seg), tuple(claimed_w.get(k, ())), tuple(claimed_g.get(k, ())))
        for k, (*_, seg) in enumerate(found)
    ]
    owned = {w for ws in claimed_w.values() for w in ws}
    units += [Unit(writes=(w,)) for w in range(len(writes)) if w not in owned]
    return units + [Unit(grants=(g,)) for g in free_grants]


def _lease(history: History, seg: Sequence[int]) -> Any:
    """The lease a holding's take was granted (its ok value's), else None."""
    for i in seg:
        op = history[i]
        if op.type == "ok" and isinstance(op.value, dict) and "lease" in op.value:
            return op.value["lease"]
    return None


class _Current:
    """Holdings by what they share (their process, their lease): which one was current
    at an instant, the latest begun by then (a write belongs to its writer's holding from
    its take to the next; a grant to the latest take of its lease)."""

    def __init__(self, keyed: Iterable[tuple[Any, int, int]]) -> None:
        self._by: dict[Any, list[tuple[int, int]]] = {}
        for key, start, k in keyed:
            self._by.setdefault(key, []).append((start, k))
        for starts in self._by.values():
            starts.sort()

    def at(self, key: Any, t: int) -> int | None:
        """The holding of ``key`` current at ``t`` (None: none had begun)."""
        mine = self._by.get(key) if isinstance(key, Hashable) else None
        i = bisect_right(mine, (t, math.inf)) if mine else 0
        return mine[i - 1][1] if mine and i else None


def signature(anomaly: dict[str, Any]) -> tuple[Any, ...]:
    """What makes an anomaly (results.json's form) the same one in a sub-record: its kind
    and each participant's role, process, time and words (token, write)."""
    involved = anomaly.get("involved") or ()
    return (
        anomaly.get("kind"),
        tuple(
            (x.get("role"), x.get("process"), x.get("invoke_time"), x.get("what"))
            for x in involved
            if isinstance(x, dict)
        ),
    )


def shows(result: CheckResult, wanted: tuple[Any, ...]) -> dict[str, Any] | None:
    """The anomaly of ``result`` with the signature ``wanted``, if it names one."""
    if result.valid is not False:
        return None
    named = result.details.get(KEY) or ()
    return next((a for a in named if isinstance(a, dict) and signature(a) == wanted), None)


class _Shrink:
    """One shrink of a record: its units, and the search over them (``Search``: the
    candidates tried, the smallest that still showed the anomaly, its bounds)."""

    def __init__(self, record: RunRecord, terms: Terms, judge: Judge, wanted: tuple[Any, ...]):
        self.record, self.judge, self.wanted = record, judge, wanted
        self.units = units_of(record, terms)
        self.grants = {g for u in self.units for g in u.grants}
        self.search = Search(record, self.shows, _size, self.units)

    def sub(self, units: Sequence[Unit]) -> RunRecord:
        """The record with only ``units``' holdings, writes and grants (faults, client
        events and the service's other events all kept)."""
        r = self.record
        ops = {i for u in units for i in u.ops}
        writes = {i for u in units for i in u.writes}
        grants = {i for u in units for i in u.grants}
        return replace(
            r,
            history=History(
                op for i, op in enumerate(r.history) if i in ops or op.process == NEMESIS
            ),
            resource_log=[w for i, w in enumerate(r.resource_log) if i in writes],
            service_events=[
                e for i, e in enumerate(r.service_events) if i in grants or i not in self.grants
            ],
        )

    def shows(self, units: list[Unit]) -> bool:
        """Whether the checker still names the anomaly in ``units``' records."""
        return shows(self.judge(self.sub(units)), self.wanted) is not None

    def run(self, seed: list[Unit]) -> list[Unit]:
        """Holdings first (from ``seed`` when it fails alone, else from all), then the
        writes of those kept one by one."""
        fails = self.search.fails
        kept = ddmin(seed, fails) if seed and fails(seed) else ddmin(self.units, fails)
        whole = [replace(u, writes=()) for u in kept]
        writes = [Unit(writes=(w,)) for u in kept for w in u.writes]

        def without(ws: list[Unit]) -> bool:
            return fails(whole + ws)

        if writes and without([]):
            return whole
        return whole + (ddmin(writes, without) if writes else [])


def _size(units: Sequence[Unit]) -> int:
    return sum(len(u.ops) + len(u.writes) for u in units)


def shrink_result(
    result: CheckResult, record: RunRecord, judge: Judge, terms: Terms
) -> CheckResult:
    """``result`` (``judge``'s of ``record``) with ``shrunk`` in its details when it is
    invalid: its first anomaly's fewest holdings and writes, confirmed by ``judge``; or
    ``shrunk_error``, why there is none. A valid or unknown result is returned as it is."""
    named = result.details.get(KEY) or ()
    if result.valid is not False or not named:
        return result
    wanted = signature(named[0])
    s = _Shrink(record, terms, judge, wanted)
    seed = _seed(s.units, record, named[0])
    kept = s.search.run(lambda: s.run(seed))
    sub = s.sub(kept)
    confirmed = shows(judge(sub), wanted)
    if confirmed is None:
        why = "the checker did not confirm the shrunk records"
        return msgspec.structs.replace(result, details={**result.details, "shrunk_error": why})
    holdings = sum(1 for u in kept if u.ops)
    writes = len(sub.resource_log)
    shrunk: dict[str, Any] = {
        "kind": named[0].get("kind"),
        "ops": [op.to_dict() for op in sub.history if op.process != NEMESIS],
        "resource_log": sub.resource_log,
        "tenure": terms.tenure,
        "holdings": holdings,
        "of_holdings": sum(1 for u in s.units if u.ops),
        "writes": writes,
        "of_writes": len(record.resource_log),
        "operations": sum(1 for op in sub.history if op.type == "invoke" and op.process != NEMESIS),
        "of": sum(1 for op in record.history if op.type == "invoke" and op.process != NEMESIS),
        **s.search.said(),
        "confirmed_by": f"the {result.checker} checker",
        "sentence": confirmed.get("sentence", ""),
    }
    return msgspec.structs.replace(result, details={**result.details, "shrunk": shrunk})


def _seed(units: Sequence[Unit], record: RunRecord, anomaly: dict[str, Any]) -> list[Unit]:
    """The units the anomaly names: those holding an operation or a write it involves."""
    indexes = {x.get("index") for x in anomaly.get("involved") or () if isinstance(x, dict)}
    times = {
        (x.get("process"), x.get("invoke_time"))
        for x in anomaly.get("involved") or ()
        if isinstance(x, dict) and x.get("index") is None
    }
    history, writes = record.history, record.resource_log
    return [
        u
        for u in units
        if any(history[i].index in indexes for i in u.ops)
        or any((writes[w].get("writer"), writes[w].get("time")) in times for w in u.writes)
    ]
