"""Unique ids: duplicates, per-client monotonicity, global order and gaps.

Reads the ids the clients were handed (the integer values of ``ok`` completions) and:

- **duplicates** (a violation): an id handed out twice, with both issuers (process, node)
  and the times of both ops, and the fault windows on when the second was issued; one
  handed out again after a power cut that discarded what the server had not fsynced is
  classified by the run's durability rule (``checkers.durability``, as
  ``checkers.classify.lost_to_power_cut`` does a lock's grant): ``lost-unsynced`` when the
  first issue was acknowledged within the time the rule says may be lost (Redis's
  appendfsync everysec), ``unexplained`` under a setting that promised durability;
- **monotonicity per client** (a violation): every generator here promises that one client
  gets increasing ids; an id not above that client's previous one is counted;
- **global order** (counted, "roughly ordered"): an id below one that a client had already
  received before this op was invoked arrived out of real-time order; how many, and by how
  much (the id difference, and how many earlier ids were greater);
- **gaps** (allowed, counted): integers between the smallest and the largest id no client
  saw (ids taken by ops whose outcome is unknown, lost counters, ids made from the clock).

An op whose outcome is unknown (``info``, or never answered) handed out no id the
clients saw: it cannot be a duplicate's issuer, it is counted (each may explain a gap).
A run in which no id was handed out tested nothing: ``unknown``.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Final

from checkers.anomalies import KEY, Anomaly, Involved, named
from checkers.classify import Classification, lost_to_power_cut
from checkers.durability import DurabilityRule, durability_rule
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.shrink_ops import named_violations, shrink_result
from checkers.windows import (
    LOSES_UNSYNCED,
    MOVES_CLOCK,
    FaultWindow,
    record_windows,
    with_effect,
)
from checkers.words import listing, plural, seconds, secs
from core.history import History

NAME: Final = "ids"
SHOWN: Final = 20
"""Duplicates and examples listed in the results (all are counted)."""


@dataclass(frozen=True, slots=True)
class Issued:
    """One id a client was handed: by which process (through which node), invoked and
    completed when (run clock, ns)."""

    id: int
    process: Any
    node: str | None
    invoked: int
    done: int
    index: int | None = None
    """The history index of its invocation."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "process": self.process,
            "node": self.node,
            "invoked_s": seconds(self.invoked),
            "completed_s": seconds(self.done),
        }


def issued_ids(history: History) -> tuple[list[Issued], int, int]:
    """The ids handed out, in completion order, and the counts of ops that ended with an
    unknown outcome (``info`` or no answer) and that certainly handed out none (``fail``)."""
    ids: list[Issued] = []
    unknown = failed = 0
    for p in history.client_ops().pairs():
        c = p.completion
        if c is None or c.type == "info":
            unknown += 1
        elif c.type == "fail":
            failed += 1
        elif isinstance(c.value, int) and not isinstance(c.value, bool):
            ids.append(
                Issued(c.value, p.invoke.process, c.node, p.invoke.time, c.time, p.invoke.index)
            )
    ids.sort(key=lambda i: i.done)
    return ids, unknown, failed


def duplicates(ids: Sequence[Issued]) -> dict[int, list[Issued]]:
    """Each id handed out more than once -> its issues, in completion order."""
    by: dict[int, list[Issued]] = defaultdict(list)
    for i in ids:
        by[i.id].append(i)
    return {k: v for k, v in by.items() if len(v) > 1}


def backsteps(ids: Sequence[Issued]) -> list[tuple[Issued, Issued]]:
    """(previous, next) for every id a client got that is not above its previous one."""
    last: dict[Any, Issued] = {}
    out = []
    for i in sorted(ids, key=lambda i: i.invoked):
        before = last.get(i.process)
        if before is not None and i.id <= before.id:
            out.append((before, i))
        last[i.process] = i
    return out


def out_of_order(ids: Sequence[Issued]) -> list[dict[str, Any]]:
    """Ids below one some client had already received when this op was invoked: the id,
    how far below the greatest such id, and how many such ids were greater."""
    seen: list[int] = []
    done = sorted(ids, key=lambda i: i.done)
    k = 0
    out = []
    for i in sorted(ids, key=lambda i: i.invoked):
        while k < len(done) and done[k].done < i.invoked:
            insort(seen, done[k].id)
            k += 1
        greater = len(seen) - bisect_right(seen, i.id)
        if greater:
            out.append({**i.to_dict(), "below_by": seen[-1] - i.id, "greater_before": greater})
    return out


def gaps(ids: Sequence[Issued]) -> dict[str, Any]:
    """Integers between the smallest and the largest id that no client saw."""
    xs = sorted({i.id for i in ids})
    holes = [(a, b) for a, b in pairwise(xs) if b - a > 1]
    missing = sum(b - a - 1 for a, b in holes)
    largest = max(holes, key=lambda h: h[1] - h[0], default=None)
    return {
        "missing": missing,
        "holes": len(holes),
        "largest": None if largest is None else {"after": largest[0], "before": largest[1]},
    }


def _windows_at(windows: Sequence[FaultWindow], i: Issued) -> list[str]:
    return [w.describe() for w in windows if w.ok and w.overlaps(i.invoked, i.done)]


def steps_back(windows: Sequence[FaultWindow], lo: int, hi: int) -> list[str]:
    """The backward clock steps the faults made in ``(lo, hi]``, in words: a clock moved
    back at a window's start (a negative offset), or moved back at its end (a positive
    offset taken back). An id made from a clock is repeated by a step back, never by the
    step forward before it: the cause is the action, not the window."""
    out = []
    for w in with_effect(windows, MOVES_CLOCK):
        for node, offset in w.offsets:
            if offset < 0 and w.began_within(lo, hi):
                out.append(
                    f"the {w.kind} fault's step of {_clock_of(node)} back {-offset:g} s "
                    f"(applied by {secs(w.start)})"
                )
            if offset > 0 and w.ended_within(lo, hi):
                out.append(
                    f"the {w.kind} fault's step of {_clock_of(node)} back {offset:g} s at its "
                    f"stop (by {secs(w.end or 0)}), taking back its step forward of "
                    f"{secs(w.start)}"
                )
    return out


def _clock_of(node: str) -> str:
    """``n2's clock``; the clients' clock (a fault of the clients' clock names them
    ``clients``)."""
    return "the clients' clock" if node == "clients" else f"{node}'s clock"


def power_cut_loss(
    id_: int, issues: list[Issued], windows: Sequence[FaultWindow], rule: DurabilityRule | None
) -> Classification | None:
    """Why ``id_`` was handed out again, when a power cut between its first issue's answer
    and its last one's took it: the first such cut the run's durability ``rule`` explains
    (None: no rule recorded, no cut in between, or none the rule explains)."""
    if rule is None:
        return None
    first, last = issues[0], issues[-1]
    for w in with_effect(windows, LOSES_UNSYNCED):
        if first.done <= w.start <= last.done:
            lost = lost_to_power_cut(
                w,
                rule,
                first.done,
                f"id {id_} ({_issuer(first)})",
                f"the restarted server handed it out again ({_issuer(last)})",
                label="a power cut discarded an id acknowledged but not yet fsynced, as the "
                "service's setting documents",
            )
            if lost is not None:
                return lost
    return None


def _cause(
    issues: list[Issued], windows: Sequence[FaultWindow], lost: Classification | None = None
) -> str:
    """Why an id was handed out again: the power cut that took it (``lost``), else the
    backward clock steps between its first and its last issue, else the fault windows on
    at the last (words after ``made``/``during``)."""
    if lost is not None:
        return f": {lost.evidence}"
    steps = steps_back(windows, issues[0].done, issues[-1].done)
    if steps:
        apart = (issues[-1].done - issues[0].done) / 1e9
        return f", {apart:.3f} s apart: after {listing(steps)}"
    during = _windows_at(windows, issues[-1])
    return f", during {listing(during)}" if during else ""


def _duplicate(
    id_: int, issues: list[Issued], windows: Sequence[FaultWindow], lost: Classification | None
) -> dict[str, Any]:
    d = {
        "id": id_,
        "issuers": [i.to_dict() for i in issues],
        "during": _windows_at(windows, issues[-1]),
        "after_steps_back": steps_back(windows, issues[0].done, issues[-1].done),
    }
    if lost is not None:
        d["classification"] = lost.to_dict()
    return d


def _involved(role: str, i: Issued) -> Involved:
    return Involved(role, i.process, i.index, i.invoked, i.done, f"got id {i.id}")


def _anomalies(
    shown: list[tuple[int, list[Issued]]],
    steps: list[tuple[Issued, Issued]],
    windows: Sequence[FaultWindow],
    lost: dict[int, Classification],
) -> list[Anomaly]:
    """One named anomaly per duplicate shown and per id not increasing (the first few)."""
    out = [
        Anomaly(
            "duplicate-id",
            named(
                "duplicate-id",
                f"id {k} handed to "
                + listing(_issuer(i) for i in v)
                + _cause(v, windows, lost.get(k)),
            ),
            tuple(_involved(f"issue {n + 1}", i) for n, i in enumerate(v)),
            key=k,
        )
        for k, v in shown
    ]
    out += [
        Anomaly(
            "id-not-increasing",
            named(
                "id-not-increasing",
                f"process {b.process} got {b.id} at {secs(b.done)} after {a.id} at {secs(a.done)}",
            ),
            (_involved("before", a), _involved("after", b)),
        )
        for a, b in steps[:SHOWN]
    ]
    return out


def _issuer(i: Issued) -> str:
    via = f" through {i.node}" if i.node else ""
    return f"process {i.process}{via} at {secs(i.done)}"


violations: Final = named_violations
"""The violations a result of this checker names (its named anomalies)."""


def check_record(record: RunRecord) -> CheckResult:
    """Judge the ids of a unique-ids run (see the module docstring); an invalid result
    carries its first violation's fewest operations (``shrunk``, ``checkers.shrink_ops``:
    a duplicate id's two issues, an id not increasing and the one before it)."""
    return shrink_result(judged(record), record, judged, violations)


def judged(record: RunRecord) -> CheckResult:
    """The ids result of ``record``, without its shrink."""
    ids, unknown, failed = issued_ids(record.history)
    windows = record_windows(record)
    dups = duplicates(ids)
    steps = backsteps(ids)
    late = out_of_order(ids)
    holes = gaps(ids)
    shown = sorted(dups.items(), key=lambda kv: kv[1][1].done)[:SHOWN]
    rule = durability_rule(record.test)
    lost = {k: c for k, v in shown if (c := power_cut_loss(k, v, windows, rule)) is not None}
    details: dict[str, Any] = {
        "issued": len(ids),
        "distinct": len({i.id for i in ids}),
        "unknown_outcome": unknown,
        "failed": failed,
        "duplicate_ids": len(dups),
        "extra_issues": sum(len(v) - 1 for v in dups.values()),
        "duplicates": [_duplicate(k, v, windows, lost.get(k)) for k, v in shown],
        "not_increasing": len(steps),
        "not_increasing_examples": [
            {"before": a.to_dict(), "after": b.to_dict()} for a, b in steps[:SHOWN]
        ],
        "out_of_order": len(late),
        "out_of_order_max_below": max((x["below_by"] for x in late), default=0),
        "out_of_order_max_greater": max((x["greater_before"] for x in late), default=0),
        "out_of_order_examples": late[:SHOWN],
        "gaps": holes,
        KEY: [a.to_dict() for a in _anomalies(shown, steps, windows, lost)],
        "violations_total": len(dups) + len(steps),
    }
    valid: Validity = not dups and not steps
    paragraphs = []
    if not ids:
        valid = UNKNOWN
        paragraphs.append(
            f"No id was handed out ({plural(unknown, 'op')} with an unknown outcome, "
            f"{failed} failed): the run tested nothing."
        )
    if dups:
        k, first = shown[0]
        paragraphs.append(
            f"Duplicates: {plural(len(dups), 'id')} handed out more than once "
            f"({plural(details['extra_issues'], 'extra issue')}); the first, id {k}, to "
            + listing(_issuer(i) for i in first)
            + _cause(first, windows, lost.get(k))
            + "."
        )
    if steps:
        a, b = steps[0]
        paragraphs.append(
            f"Not increasing per client: {plural(len(steps), 'id')} not above the same "
            f"client's previous one; the first, process {b.process} got {b.id} at "
            f"{secs(b.done)} after {a.id} at {secs(a.done)}."
        )
    if ids and not dups:
        paragraphs.insert(0, f"{plural(len(ids), 'id')} handed out, all distinct.")
    paragraphs.append(_order_words(late, len(ids)) + " " + _gap_words(holes, unknown))
    return CheckResult(NAME, valid, " ".join(paragraphs), details)


def _order_words(late: list[dict[str, Any]], n: int) -> str:
    if not late:
        return "Global order: every id above all ids handed out before its op began."
    return (
        f"Global order: {len(late)} of {n} ids arrived out of real-time order (below an id "
        f"a client already had), by up to {max(x['below_by'] for x in late)} "
        f"(up to {max(x['greater_before'] for x in late)} greater ids already out)."
    )


def _gap_words(holes: dict[str, Any], unknown: int) -> str:
    maybe = (
        f"; {plural(unknown, 'op')} with an unknown outcome may each have taken one"
        if unknown
        else ""
    )
    return (
        f"Gaps (allowed): {holes['missing']} integers in {plural(holes['holes'], 'hole')} "
        f"between the smallest and the largest id were never seen by a client{maybe}."
    )
