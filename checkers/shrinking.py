"""What every shrink of a checker's records shares: its bounds and what it keeps.

A shrink (``checkers.shrink_holdings``, ``checkers.shrink_ops``) tries candidates, each a
part of the run's records, with the test of failure of its checker (``Search.fails``), and
keeps the smallest candidate it saw fail. It stops at its time (``SHRINK_S``, or half the
check's time limit when that is shorter) or its memory (``checkers.ddmin.bound``: the
check's memory limit, else half the memory available; polled before each candidate):
then what it keeps is that smallest failing candidate, said ``not minimal`` and why
(``Search.run``), never a smaller one nobody saw fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, TypeVar

from checkers.ddmin import bound
from checkers.record import RunRecord
from checkers.result import CheckResult
from core.formats.budget import OutOfBudget

SHRINK_S: Final = 10.0
"""Seconds a shrink may take at most (less when the check's time limit is shorter)."""

U = TypeVar("U")
Judge = Callable[[RunRecord], CheckResult]
"""A checker without its shrink: the function whose result a shrink shrinks, which judges
every candidate and the result again."""


class OutOfTime(Exception):
    """The shrink's time ran out: keep the smallest failing candidate found."""


def shrink_seconds(record: RunRecord) -> float:
    """The seconds a shrink of ``record`` may take: ``SHRINK_S``, or half the check's time
    limit when that is shorter."""
    limit = record.limits.time_limit
    return SHRINK_S if limit is None else min(SHRINK_S, limit / 2)


class Search(Generic[U]):
    """One shrink's candidates: ``test`` says whether a candidate (a list of units)
    still fails; ``size`` how big one is. It counts the candidates checked, keeps the
    smallest that failed (from ``start``, which fails) and ends the search at its bounds."""

    def __init__(
        self,
        record: RunRecord,
        test: Callable[[list[U]], bool],
        size: Callable[[Sequence[U]], int],
        start: list[U],
    ) -> None:
        self.test, self.size, self.smallest = test, size, start
        self.seconds = shrink_seconds(record)
        self.started = time.monotonic()
        self.until = self.started + self.seconds
        self.budget = bound(record.limits.budget)
        self.checks = 0
        self.why_not = ""

    def fails(self, units: list[U]) -> bool:
        """Whether ``units`` still fail; ``OutOfTime`` past the shrink's time,
        ``OutOfBudget`` past its memory."""
        if time.monotonic() > self.until:
            raise OutOfTime
        self.budget.check("shrinking the counterexample")
        self.checks += 1
        if not self.test(units):
            return False
        if self.size(units) < self.size(self.smallest):
            self.smallest = units
        return True

    def run(self, body: Callable[[], list[U]]) -> list[U]:
        """What ``body`` (the search) found, or, when a bound stopped it, the smallest
        failing candidate seen (``why_not`` then says which bound)."""
        try:
            return body()
        except OutOfTime:
            self.why_not = f"not minimal (out of its {self.seconds:g} s)"
        except OutOfBudget as e:
            self.why_not = f"not minimal ({e})"
        return self.smallest

    def said(self) -> dict[str, Any]:
        """The search's part of a result's ``shrunk``: minimal or why not, the candidates
        checked and the seconds taken."""
        out: dict[str, Any] = {
            "minimal": not self.why_not,
            "checks": self.checks,
            "elapsed_s": round(time.monotonic() - self.started, 6),
        }
        if self.why_not:
            out["not_minimal"] = self.why_not
        return out
