"""Delta debugging (Zeller and Hildebrandt's ``ddmin``): the fewest of a failing input's
parts that still fail, for any parts and any test of failure.

The shrinks of counterexamples use it: ``checkers.linear.shrink`` over a partition's
operations, ``checkers.shrink_holdings`` over a lock run's holdings and writes,
``checkers.shrink_ops`` over the operations of the other checkers' violations. The
test (``fails``) is theirs, with whatever it refuses or counts; it may raise to stop the
search early (out of time), and the caller keeps the smallest failing input it saw.

Every shrink keeps to a memory bound (``bound``): the check's budget where it has one
(``harness check --memory-limit``, half the memory available by default), else, as at the
end of a run, ``MEMORY_SHARE`` of the memory available when the shrink starts. Out of it,
a shrink stops where it is, as out of time: what it keeps is a failing input it saw,
said not minimal, never a smaller one it did not see fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from core.formats.budget import Budget, default_memory_limit

T = TypeVar("T")


def ddmin(units: list[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """Split ``units`` (which fail) into ``n`` chunks; keep a chunk that fails alone, else
    a complement that does, else split finer; done when single units were tried: the
    result is 1-minimal (no one unit of it can be dropped) as far as ``fails`` tells."""
    n = 2
    while len(units) >= 2:
        chunks = split(units, n)
        for c in chunks:
            if fails(c):
                units, n = c, 2
                break
        else:
            for k in range(len(chunks)) if n > 2 else ():
                rest = [u for j, c in enumerate(chunks) if j != k for u in c]
                if fails(rest):
                    units, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(units):
                    return units
                n = min(2 * n, len(units))
    return units


def split(units: list[T], n: int) -> list[list[T]]:
    """``units`` in ``n`` chunks of sizes differing by at most one, in order."""
    size, extra = divmod(len(units), n)
    out, at = [], 0
    for k in range(n):
        step = size + (k < extra)
        out.append(units[at : at + step])
        at += step
    return out


def bound(budget: Budget | None) -> Budget:
    """The budget a shrink keeps to: the check's, else a memory limit of its own (the
    default of ``harness check --memory-limit``: half the memory available)."""
    return budget if budget is not None else Budget(memory_limit=default_memory_limit())
