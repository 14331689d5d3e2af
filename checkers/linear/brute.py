"""Brute force: try every order of the operations. The slowest correct answer, for tests.

No memoization, no hints, no reductions: every sequence that respects real time is
tried, every uncertain operation either placed somewhere or left out, and only
``init`` and ``step`` decide legality. Exponential: keep it to about a dozen operations.
"""

from __future__ import annotations

from checkers.linear.model import Model
from checkers.linear.prepare import Problem


def brute_check(problem: Problem, model: Model) -> bool:
    """Whether some order of the problem's operations is a legal linearization."""
    entries = problem.entries
    certain = [i for i, e in enumerate(entries) if e.certain]

    def extend(state: object, remaining: frozenset[int]) -> bool:
        if not any(i in remaining for i in certain):
            return True
        for y in remaining:
            e = entries[y]
            # y may go next only if no remaining op had returned before y was invoked.
            if any(entries[z].end < e.start for z in remaining):
                continue
            ok, new = model.step(state, e.call.input, e.call.output)
            if ok and extend(new, remaining - {y}):
                return True
        return False

    return extend(problem.init, frozenset(range(len(entries))))
