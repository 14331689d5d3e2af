"""Shrinking a non-linearizable partition: the fewest of its operations that still
cannot be ordered, so that a reader sees a failure in four operations, not in a
thousand.

Delta debugging (Zeller and Hildebrandt's ``ddmin``) over the partition's operations:
an operation is its invocation with its completion (``ok``, ``fail`` or ``info``), or an
invocation that never completed; it is kept or dropped whole, and the events kept keep
their own indices and times, so the real-time order of what is left is the original's.
Operations of unknown outcome (``info``, never completed) are first dropped together, as
one unit, then one by one like the rest. A candidate "still fails" when the check it is
given (``Fails``: the checker's own fast path, passed in by ``checkers.linearizability``)
says it is not linearizable; an unknown (out of the candidate's time) is not a failure.

A candidate must still show the same violation, not one that dropping operations made: a
read of 3 whose write of 3 was dropped cannot be ordered either, but only because the
write is gone; and a read of 0 after a write of 4 cannot be ordered, but only because the
writes of 0 between them are gone. So, for a model with hints
(``checkers.linear.model.Hint``), each read (an operation that took effect and needs one
state, or an operation that is not blind: a failed cas saw another value) has its sources
in the whole partition: the operations leaving a state it is legal in, invoked before it
returned and not overwritten before it began (or all of them, where every one was: a
stale read); a candidate that keeps a read without any of its sources is refused
unchecked (``_Sources``). A read whose state nothing leaves is admitted alone: that is its
violation. Where the hints cannot tell (a call that may leave any
state: an append), a candidate that fails is checked once more with every operation
made concurrent with every other (each its own process): one that cannot be ordered
even so fails for want of what was dropped, not for real time, and is refused, unless
the whole partition cannot be ordered even so; one undecided in ``TIMELESS_S`` is
refused too (the shrink would rather keep more than tell another story). These are
necessary conditions, not a proof that the story is the same one: the shrunk history is
a violation the history has, on its failing key, not always the one its counterexample
names.

The result is 1-minimal (dropping any one operation left makes it linearizable) unless the
time ran out first, or a candidate went undecided: then it is the smallest failing
sub-history found so far, and says it is not minimal and why. Before it is returned, the
plain Wing & Gong search (``checkers.linear.plain``: no reductions, no compiled code)
checks it again; a result that search does not find non-linearizable is not given.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, NamedTuple

from checkers.ddmin import ddmin
from checkers.linear.model import ANY, NOTHING, Model
from checkers.linear.plain import plain_check
from checkers.linear.prepare import INF, problem
from core.formats.budget import Budget, OutOfBudget
from core.history import History
from core.ops import NEMESIS, Op

__all__ = ["CANDIDATE_S", "DEFAULT_SHRINK_S", "Fails", "Shrunk", "operations", "shrink"]

Fails = Callable[[History, float | None], bool | None]
"""Whether a sub-history is not linearizable (True), is (False), or went undecided within
the seconds given (None: no limit)."""

DEFAULT_SHRINK_S: Final = 60.0
"""Seconds a shrink may take at most (less when the check's deadline is nearer)."""
CANDIDATE_S: Final = 5.0
"""Seconds one candidate may take: a hard sub-history does not use up the whole shrink."""
TIMELESS_S: Final = 1.0
"""Seconds a candidate's check without real time may take (undecided: refused)."""
MAX_SOURCES_WORK: Final = 4_000_000
"""States times observations without a required state (each tried in every state by
``step``) past which the sources are not worked out (the candidates are then checked
without real time instead, as for a model without hints)."""
PLAIN_STEPS: Final = 2_000_000
"""Steps the plain search may take to confirm the result (a 1-minimal history is small)."""

Unit = tuple[int, ...]  # positions in the partition of one operation's events


class Shrunk(NamedTuple):
    """A shrunk partition: the events kept (``ops``, in history order), how many
    operations they are of how many the partition had, whether no operation of it can be
    dropped (``minimal``; else ``why_not`` says why it stopped), the candidates checked and
    whether the plain search confirmed it (``confirmed``: True, False or None when it did
    not decide within its steps)."""

    ops: tuple[Op, ...]
    operations: int
    of: int
    minimal: bool
    why_not: str
    checks: int
    elapsed_s: float
    confirmed: bool | None


class _Stop(Exception):
    """The shrink's time (or the check's memory) ran out: keep what was found so far."""


def operations(ops: Sequence[Op]) -> list[Unit]:
    """The operations of ``ops`` (client events of one partition, well formed): each the
    positions of its invocation and its completion, or of an invocation alone."""
    open_: dict[Any, int] = {}
    units: list[Unit] = []
    at: dict[int, int] = {}  # invocation position -> its unit
    for i, op in enumerate(ops):
        if op.process == NEMESIS:
            continue
        if op.type == "invoke":
            open_[op.process] = i
            at[i] = len(units)
            units.append((i,))
        else:
            inv = open_.pop(op.process)
            units[at[inv]] = (inv, i)
    return units


def shrink(
    part: History,
    model: Model,
    label: Hashable,
    fails: Fails,
    deadline: float | None,
    budget: Budget | None = None,
) -> Shrunk:
    """The smallest sub-history of the non-linearizable partition ``part`` (labelled
    ``label``) that ``fails`` still finds non-linearizable, by the check's deadline and
    within ``DEFAULT_SHRINK_S``, and ``budget``'s memory, confirmed by the plain search."""
    started = time.perf_counter()
    cap = started + DEFAULT_SHRINK_S
    deadline = cap if deadline is None else min(deadline, cap)
    ops = part.ops
    units = operations(ops)
    d = _Ddmin(ops, fails, deadline, budget, _Sources(model, label, ops))
    kept = units
    try:
        certain: list[Unit] = [u for u in units if len(u) == 2 and ops[u[1]].type != "info"]
        if len(certain) < len(units) and d.fails(certain):
            kept = certain
        kept = d.run(kept)
        why_not = f"{d.undecided} sub-histories undecided" if d.undecided else ""
    except _Stop as e:
        kept, why_not = d.smallest or kept, str(e)
    shrunk = d.events(kept)
    confirmed = plain_check(problem(History(shrunk), model, label), model, PLAIN_STEPS)
    return Shrunk(
        shrunk,
        len(kept),
        len(units),
        not why_not,
        why_not,
        d.checks,
        round(time.perf_counter() - started, 6),
        None if confirmed == "unknown" else confirmed is False,
    )


class _Ddmin:
    """One shrink's delta debugging: its candidates checked, the smallest failing one so
    far, the candidates left undecided."""

    def __init__(
        self,
        ops: tuple[Op, ...],
        fails: Fails,
        deadline: float,
        budget: Budget | None,
        sources: _Sources,
    ) -> None:
        self.ops = ops
        self._fails = fails
        self.deadline = deadline
        self.budget = budget
        self.sources = sources
        self._orderless: bool | None = None  # whether the partition has no order at all
        self.checks = 0
        self.undecided = 0
        self.smallest: list[Unit] | None = None

    def events(self, units: Sequence[Unit]) -> tuple[Op, ...]:
        """The events of ``units``, in history order."""
        ops = self.ops
        return tuple(ops[i] for i in sorted(i for u in units for i in u))

    def fails(self, units: list[Unit]) -> bool:
        """Whether the sub-history of ``units`` still fails; _Stop when time is out."""
        left = self.deadline - time.perf_counter()
        if left <= 0:
            raise _Stop("not minimal (out of time)")
        events = self.events(units)
        judged = self.sources.need is not None
        if not self.sources.admits(events):
            return False  # a violation of its own, made by what was dropped
        got = self._check(History(events), CANDIDATE_S)
        if got is None:
            self.undecided += 1
            return False
        if got and not judged and not self.orderless() and self._timeless(events) != 0:
            return False  # no order at all, where the partition has one
        if got:
            self.smallest = units
        return got

    def orderless(self) -> bool:
        """Whether the whole partition cannot be ordered even without real time."""
        if self._orderless is None:
            self._orderless = self._timeless(self.ops) == 1
        return self._orderless

    def _timeless(self, events: Sequence[Op]) -> int:
        """1 if ``events`` cannot be ordered with every operation concurrent, 0 if they
        can, -1 undecided within ``TIMELESS_S``."""
        got = self._check(_concurrent(events), TIMELESS_S)
        return -1 if got is None else int(got)

    def _check(self, sub: History, seconds: float) -> bool | None:
        """``fails`` of ``sub`` within ``seconds`` and the time left; _Stop past the
        deadline or the budget."""
        left = self.deadline - time.perf_counter()
        if left <= 0:
            raise _Stop("not minimal (out of time)")
        try:
            if self.budget is not None:
                self.budget.check("shrinking the counterexample")
            self.checks += 1
            got = self._fails(sub, min(left, seconds))
        except OutOfBudget as e:
            raise _Stop(f"not minimal ({e})") from None
        if got is None and time.perf_counter() >= self.deadline:
            raise _Stop("not minimal (out of time)")
        return got

    def run(self, units: list[Unit]) -> list[Unit]:
        """``ddmin`` (``checkers.ddmin``) over ``units``, by this shrink's ``fails``."""
        return ddmin(units, self.fails)


class _Sources:
    """Which operations an observation (an operation that took effect and is not blind: a
    read, a cas, a failed cas where that means "not the expected value") may have seen the
    state from, in the whole partition: the operations leaving a state it is legal in
    (its hint's ``requires``, else the model's ``step`` in each state some operation
    leaves), invoked before it returned and not overwritten before it began (no operation
    that took effect changed the state between the two); where every one was overwritten
    (the violation may be just that: a stale read), all of them. One that may have seen
    the initial state needs none. ``admits`` a candidate that keeps, for every such
    operation it keeps, one of its sources: a sub-history where a read lost what it read
    is another story. ``need`` None: the hints cannot tell (a model without them, a call
    that may leave any state, too many states)."""

    def __init__(self, model: Model, label: Hashable, ops: Sequence[Op]) -> None:
        self.need: dict[int, frozenset[int]] | None = None
        hint_of = getattr(model, "hint", None)
        if hint_of is None:
            return
        p = problem(History(ops), model, label)
        starts, ends = p.starts, p.ends
        hints = []
        for call in p.calls:
            h = hint_of(call)
            if h.produces is ANY:
                return
            hints.append(h)
        producers: dict[Any, list[int]] = {}
        for i, h in enumerate(hints):
            if h.produces is not NOTHING:
                producers.setdefault(h.produces, []).append(i)
        # Certain changes of the state by start; the least end of those starting later.
        certain = hints[: p.n_certain]
        changes = sorted(
            (starts[i], ends[i]) for i, h in enumerate(certain) if h.produces is not NOTHING
        )
        first = [s for s, _ in changes]
        least = [INF] * (len(changes) + 1)
        for k in range(len(changes) - 1, -1, -1):
            least[k] = min(changes[k][1], least[k + 1])

        def overwritten(end: int, by: int) -> bool:  # a change from after ``end`` to ``by``
            return least[bisect_right(first, end)] < by

        states = [p.init, *(x for x in producers if x != p.init)]
        stepped = sum(1 for h in certain if not h.blind and h.requires is NOTHING)
        if len(states) * stepped > MAX_SOURCES_WORK:
            return  # too many states to try every observation in: the hints cannot tell
        need = {}
        for i, h in enumerate(certain):
            if h.blind:
                continue  # it observes nothing
            call = p.calls[i]
            seen = (
                [h.requires]
                if h.requires is not NOTHING
                else [x for x in states if model.step(x, call.input, call.output)[0]]
            )
            if len(seen) == len(states):
                continue  # legal whatever the state: nothing it saw to keep
            some = [j for x in seen for j in producers.get(x, ()) if j != i and starts[j] < ends[i]]
            if p.init in seen and not overwritten(-1, starts[i]):
                continue  # it may have seen the initial state: nothing to keep for it
            live = [j for j in some if not overwritten(ends[j], starts[i])]
            if some:  # else: a state nothing leaves, or the initial one overwritten
                need[p.invokes[i].index] = frozenset(p.invokes[j].index for j in live or some)
        self.need = need

    def admits(self, events: Sequence[Op]) -> bool:
        """Whether every read ``events`` keep keeps one of its sources (a read whose state
        nothing in the partition leaves is admitted alone: that is its violation)."""
        if self.need is None:
            return True
        kept = {op.index for op in events if op.type == "invoke"}
        return all(
            not sources or not sources.isdisjoint(kept)
            for r, sources in self.need.items()
            if r in kept
        )


def _concurrent(events: Sequence[Op]) -> History:
    """``events`` with every operation concurrent with every other: each its own process,
    every invocation before every completion, in their order."""
    units = operations(events)
    n = len(units)
    out = [events[u[0]].with_(index=k, time=k, process=k) for k, u in enumerate(units)]
    out += [
        events[u[1]].with_(index=n + k, time=n + k, process=k)
        for k, u in enumerate(units)
        if len(u) == 2
    ]
    return History(out)
