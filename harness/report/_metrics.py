"""Numbers about a run's client operations: latency quantiles and availability.

Availability is the fraction answered among the client operations that completed (``ok``,
``fail`` or ``info``; an operation that never returned is left out): ``ok``, or a ``fail``
the service gave by design (``checkers.refusals``, as ``checkers.stats`` counts it),
counted apart for operations whose interval overlaps a fault window and for the others. Latency
is completion minus invocation of ``ok`` operations. Stats of several runs pool
(``pooled``) so a comparison cell over three runs is as exact as one over one run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from checkers.refusals import refused_by_design
from checkers.windows import FaultWindow
from core.history import History

QUANTILES = (0.5, 0.95, 0.99)
AVAILABLE_MEANS = (
    "the fraction of completed client operations the service answered: ok, or refused by "
    "design (a compare-and-set whose value differed, a lock held by another, a stale token "
    "or basis refused, a lease the service let expire); a fail for lack of the service "
    "and an unknown outcome are outages"
)
"""What the report's availability counts, said where it is shown."""


@dataclass(frozen=True, slots=True)
class OpStats:
    """Outcome counts and sorted ``ok`` latencies (ns) of client operations; answered:
    ``ok`` or refused by design."""

    latencies: tuple[int, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)  # ok / fail / info / open
    answered_in_fault: int = 0
    done_in_fault: int = 0
    answered_clear: int = 0
    done_clear: int = 0
    refused: int = 0
    """The ``fail`` operations the service refused by design (answered, so available)."""

    def latency_quantile(self, q: float) -> float | None:
        """The ``q`` quantile of ok latencies in seconds (nearest rank), None if no ok op."""
        return quantile(self.latencies, q) / 1e9 if self.latencies else None

    @property
    def availability_in_fault(self) -> float | None:
        return _ratio(self.answered_in_fault, self.done_in_fault)

    @property
    def availability_clear(self) -> float | None:
        return _ratio(self.answered_clear, self.done_clear)


def op_stats(history: History, windows: Sequence[FaultWindow]) -> OpStats:
    """The stats of a history's client operations, given its fault windows."""
    run_end = history[-1].time if len(history) else 0
    latencies: list[int] = []
    counts = {"ok": 0, "fail": 0, "info": 0, "open": 0}
    tally = [0, 0, 0, 0]  # answered_in, done_in, answered_clear, done_clear
    refused = 0
    for pair in history.pairs():
        if not pair.invoke.is_client:
            continue
        if pair.completion is None:
            counts["open"] += 1
            continue
        kind = pair.completion.type
        counts[kind] += 1
        start, end = pair.invoke.time, pair.completion.time
        if kind == "ok":
            latencies.append(end - start)
        by_design = refused_by_design(pair.completion)
        refused += by_design
        base = 0 if any(w.overlaps(start, min(end, run_end)) for w in windows) else 2
        tally[base + 1] += 1
        tally[base] += kind == "ok" or by_design
    latencies.sort()
    answered_in, done_in, answered_clear, done_clear = tally
    return OpStats(
        tuple(latencies), counts, answered_in, done_in, answered_clear, done_clear, refused
    )


def pooled(stats: Iterable[OpStats]) -> OpStats:
    """The stats of several runs taken together."""
    items = list(stats)
    counts: dict[str, int] = {}
    for s in items:
        for k, v in s.counts.items():
            counts[k] = counts.get(k, 0) + v
    return OpStats(
        tuple(sorted(x for s in items for x in s.latencies)),
        counts,
        sum(s.answered_in_fault for s in items),
        sum(s.done_in_fault for s in items),
        sum(s.answered_clear for s in items),
        sum(s.done_clear for s in items),
        sum(s.refused for s in items),
    )


def quantile(sorted_values: Sequence[int | float], q: float) -> float:
    """Nearest-rank quantile of a non-empty sorted sequence."""
    i = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return float(sorted_values[i])


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None
