"""Deciding a history's partitions: the unique-values fast path where it applies to a big
partition (``checkers.linear.unique``; else, on a big partition, the refutation of a state
nothing produces, ``checkers.linear.unproduced``), the search everywhere else, all within
one budget.

The first invalid partition ends the work, whichever way it was found: the fast path runs
first (it is linear), so an invalid big partition spares the searches altogether.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from checkers.linear.model import Model
from checkers.linear.prepare import Problem
from checkers.linear.schedule import SKIPPED, Budget, run_searches
from checkers.linear.search import Search, SearchResult

if TYPE_CHECKING:
    from checkers.linear.unique import Verdict

MIN_OPS: Final = 5000
"""Partitions with fewer operations go to the search; the paths without a search (imported
only for such a partition) take bigger ones."""
SECONDS_PER_OP: Final = 100e-6
"""A pessimistic cost per operation of the unique-values path (measured: 20-25 us): it
runs only when this much time is left before the check's deadline, as it cannot be
stopped midway."""


class Outcome(NamedTuple):
    """One partition's result: the verdict and what found it, the operations it weighed,
    and (for an invalid one, when asked for) its counterexample."""

    result: SearchResult
    ops: int
    fast: bool
    counterexample: dict[str, Any] | None = None


class Solved:
    """The partitions' outcomes (``outcomes``, in the order of the problems); their
    counterexamples are built on demand (``explain``), after the verdict."""

    def __init__(self, problems: list[Problem], model: Model, budget: Budget) -> None:
        self.problems = problems
        self.model = model
        self._searches: dict[int, Search] = {}
        self._unsearchable: set[int] = set()
        fast: list[Verdict | None] = [None] * len(problems)
        refuted = False
        for i, p in enumerate(problems):
            if budget.meter is not None:
                budget.meter.poll("deciding the partitions")
            if _fast_fits(len(p.calls), budget):
                from checkers.linear import unique, unproduced

                v = fast[i] = unique.verdict(p, model, budget.meter)
                if v is None:
                    v = fast[i] = unproduced.verdict(p, model)
                    if v is not None:
                        self._unsearchable.add(i)  # explained by its refutation alone
                if v is not None and not v.valid:
                    refuted = True  # the rest is skipped, as the first invalid one ends it
                    break
        self._fast = fast
        self._budget = budget
        results = [
            SearchResult("unknown", reason=SKIPPED) if v is None else SearchResult(v.valid)
            for v in fast
        ]
        rest = [i for i, v in enumerate(fast) if v is None]
        if rest and not refuted:
            searches = [Search(problems[i], model, meter=budget.meter) for i in rest]
            self._searches = dict(zip(rest, searches, strict=True))
            for i, r in zip(rest, run_searches(searches, budget), strict=True):
                results[i] = r
        self.outcomes = [
            Outcome(
                r,
                len(self._searches[i].index) if i in self._searches else len(problems[i].calls),
                fast[i] is not None,
            )
            for i, r in enumerate(results)
        ]

    def explain(self, i: int) -> dict[str, Any]:
        """The counterexample of invalid partition ``i``."""
        from checkers.linear.counterexample import counterexample  # only for an invalid one

        v = self._fast[i]
        if v is not None and v.explain is not None:
            if i in self._unsearchable:  # the search would spend its 10 s and not refute it
                return v.explain()
            return _searched_explain(self.problems[i], self.model, self._budget) or v.explain()
        return counterexample(self.problems[i], self._searches[i], self.outcomes[i].result)


EXPLAIN_SECONDS = 10.0
"""How long the search may take to explain a partition the fast path refuted."""


def _searched_explain(problem: Problem, model: Model, budget: Budget) -> dict[str, Any] | None:
    """The search's counterexample of a partition the fast path refuted, when the search
    refutes it too within ``EXPLAIN_SECONDS`` (and the check's budget): it has what the
    fast path's lacks, the longest partial linearizations step by step. None otherwise.
    Only ever run after an invalid verdict."""
    from checkers.linear.counterexample import counterexample

    deadline = time.perf_counter() + EXPLAIN_SECONDS
    if budget.deadline is not None:
        deadline = min(deadline, budget.deadline)
    search = Search(problem, model, meter=budget.meter)
    (r,) = run_searches([search], budget._replace(deadline=deadline))
    return counterexample(problem, search, r) if r.valid is False else None


def _fast_fits(n: int, budget: Budget) -> bool:
    """Whether a partition of ``n`` ops takes the fast path: big enough, and (as it cannot
    be stopped midway) with time left for it at a pessimistic ``SECONDS_PER_OP``;
    otherwise the search, which keeps to the deadline, takes it."""
    if n < MIN_OPS:
        return False
    return budget.deadline is None or (budget.deadline - time.perf_counter() > n * SECONDS_PER_OP)
