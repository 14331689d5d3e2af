"""Running the partitions' searches together, within a time and a memory budget.

Partitions are not checked one after another: one hopeless partition must not hide a
quick refutation in another (porcupine's kv c50-bad has two keys that do not finish in
30 s and one refuted in 2 ms). Every active search gets a slice of steps in turn, smallest
partitions first, and the slices double each round (up to a cap), so a partition refuted
in ``k`` steps is found after at most about ``2 k`` steps of each other partition. The
first invalid partition ends the check.

Budgets are honest: when time runs out the unfinished partitions are "unknown"; when the
memoized configurations of all active searches exceed the memory budget (estimated
bytes, or a count), the largest search is stopped as "unknown" (and its memory freed)
and the others go on, since one of them may still prove the history invalid. The
check's own budget (``meter``: its time, and the whole process's memory) is polled
after every slice, and compiling a search accounts its tables against it: past it,
OutOfBudget ends the check, unknown.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Final, NamedTuple

from checkers.linear.search import Search, SearchResult
from core.formats.budget import Budget as Meter

FIRST_QUOTA: Final = 16
LONE_QUOTA: Final = 1024
"""The first slice of a small search (lazily compiled, ``bits.LAZY``) that runs alone:
nothing to interleave it with, so its slices only pace the deadline and memory checks
(its configurations are small), and most such searches end in one."""
MAX_QUOTA: Final = 8192
SLICE_SECONDS: Final = 0.05
SKIPPED: Final = "not checked: another partition was already found invalid"


class Budget(NamedTuple):
    """Limits for one check: a wall-clock deadline (``time.perf_counter`` seconds), caps
    on the memoized configurations of the active searches: their estimated bytes
    (``max_memory``) and their number (``max_configs``), and the check's budget
    (``meter``), polled between slices and passed to the searches' compilation."""

    deadline: float | None = None
    max_configs: int | None = None
    max_memory: int | None = None
    meter: Meter | None = None


def run_searches(searches: list[Search], budget: Budget) -> list[SearchResult]:
    """Every search's result; the order of the input."""
    n = len(searches)
    results: list[SearchResult | None] = [None] * n
    gens: dict[int, Generator[int, int, SearchResult]] = {}
    if n > 1:
        active = sorted(range(n), key=[len(s.index) for s in searches].__getitem__)
        quota = FIRST_QUOTA
    else:
        active = list(range(n))
        quota = LONE_QUOTA if n and searches[0].lazy else FIRST_QUOTA
    deadline, max_configs, max_memory, meter = budget
    limited = max_configs is not None or max_memory is not None
    clock = time.perf_counter
    while active:
        still: list[int] = []
        slowest = 0.0
        for i in active:
            gen = gens.get(i)
            if gen is None:
                gen = gens[i] = searches[i].run()
                next(gen)
            started = clock()
            try:
                gen.send(quota)
            except StopIteration as stop:
                result: SearchResult = stop.value
                results[i] = result
                searches[i].memo.clear()
                if result.valid is False:
                    _stop_all(searches, results, gens, SKIPPED)
                    return [r for r in results if r is not None]
                continue
            still.append(i)
            now = clock()
            slowest = max(slowest, now - started)
            if deadline is not None and now > deadline:
                _stop_all(searches, results, gens, "time limit reached before a verdict")
                return [r for r in results if r is not None]
            if meter is not None:
                meter.poll("searching")
        active = still
        if limited and active:
            active = _enforce_memory(searches, results, gens, active, budget)
        # Slices grow while they stay short, so that deadlines are checked often enough
        # even where steps are slow (big partitions).
        if slowest < SLICE_SECONDS:
            quota = min(quota * 2, MAX_QUOTA)
        elif slowest > 2 * SLICE_SECONDS:
            quota = max(quota // 2, FIRST_QUOTA)
    return [r for r in results if r is not None]


def _enforce_memory(
    searches: list[Search],
    results: list[SearchResult | None],
    gens: dict[int, Generator[int, int, SearchResult]],
    active: list[int],
    budget: Budget,
) -> list[int]:
    max_configs = budget.max_configs
    max_memory = budget.max_memory
    while active:
        configs = sum(searches[i].configs for i in active)
        memory = sum(searches[i].memory() for i in active)
        if max_configs is not None and configs > max_configs:
            limit = f"{max_configs} memoized configurations"
        elif max_memory is not None and memory > max_memory:
            limit = f"about {max_memory >> 20} MiB for the searches"
        else:
            break
        biggest = max(active, key=lambda i: searches[i].memory())
        results[biggest] = searches[biggest].unknown(f"memory limit reached ({limit})")
        _close(searches, gens, biggest)
        active = [i for i in active if i != biggest]
    return active


def _stop_all(
    searches: list[Search],
    results: list[SearchResult | None],
    gens: dict[int, Generator[int, int, SearchResult]],
    reason: str,
) -> None:
    for i, s in enumerate(searches):
        if results[i] is None:
            results[i] = s.unknown(reason if i in gens else _not_started(reason))
            _close(searches, gens, i)


def _not_started(reason: str) -> str:
    return reason if reason == SKIPPED else f"{reason} (not started)"


def _close(
    searches: list[Search], gens: dict[int, Generator[int, int, SearchResult]], i: int
) -> None:
    gen = gens.pop(i, None)
    if gen is not None:
        gen.close()
    searches[i].memo.clear()
