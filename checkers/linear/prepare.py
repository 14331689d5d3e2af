"""From a history to search problems: one per partition.

A problem lists its operations as the search sees them: the model's ``Call`` and the
operation's interval in history order (``start`` is the invocation's index, ``end`` the
completion's; ``end`` is ``INF`` for an operation of unknown outcome, which may take
effect at any time after its invocation, or never). Real-time order: ``a`` precedes
``b`` iff ``a.end < b.start``. Operations are kept as parallel lists (the hot path builds
no object per operation); ``Problem.entries`` gives them as records for reports.
"""

from __future__ import annotations

from collections.abc import Hashable
from operator import attrgetter
from typing import Any, Final, NamedTuple

from checkers.linear.model import Call, Model
from core.history import History, MalformedHistory
from core.ops import NEMESIS, Op

INF: Final = 1 << 62
"""The end of an operation that may take effect at any time after its invocation."""


class Entry(NamedTuple):
    """One operation for reports: the model's reading of it and its interval."""

    invoke: Op
    completion: Op | None
    call: Call
    start: int
    end: int

    @property
    def certain(self) -> bool:
        return self.end != INF


class Problem:
    """One independent part of a history, as parallel lists: certain operations first,
    by end, then uncertain ones, by start."""

    def __init__(
        self,
        label: Any,
        init: Hashable,
        calls: list[Call],
        starts: list[int],
        ends: list[int],
        invokes: list[Op],
        completions: list[Op | None],
        n_certain: int,
        dropped: int = 0,
    ) -> None:
        self.label = label
        self.init = init
        self.calls = calls
        self.starts = starts
        self.ends = ends
        self.invokes = invokes
        self.completions = completions
        self.n_certain = n_certain
        self.dropped = dropped

    def entry(self, i: int) -> Entry:
        return Entry(
            self.invokes[i], self.completions[i], self.calls[i], self.starts[i], self.ends[i]
        )

    @property
    def entries(self) -> list[Entry]:
        return [self.entry(i) for i in range(len(self.calls))]


def partitions(history: History, model: Model) -> list[tuple[Any, History]]:
    """The independent parts the model splits a history into, with their labels (one
    part, labelled None, for a model without ``partition``)."""
    partition = getattr(model, "partition", None)
    return partition(history) if partition is not None else [(None, history)]


def problems(history: History, model: Model) -> list[Problem]:
    """The search problems of a history: one per partition the model splits it into.
    Raises MalformedHistory where the op semantics are broken."""
    return [problem(part, model, label) for label, part in partitions(history, model)]


def problem(history: History, model: Model, label: Any = None) -> Problem:
    """The search problem of one partition (nemesis ops are skipped): one pass pairing
    invocations with completions, the model reading each pair."""
    # The open invocation of each busy process (popped at its completion), _RETIRED for
    # a process whose op ended ``info``, and _SKIP for the nemesis.
    current: dict[Any, Any] = {NEMESIS: _SKIP}
    pop = current.pop
    call_of = model.call
    # Certain ops are collected as they complete, hence already in order of end.
    calls: list[Call] = []
    starts: list[int] = []
    ends: list[int] = []
    invokes: list[Op] = []
    completions: list[Op | None] = []
    # Uncertain ones (info) are collected at completion too, then merged with the ones
    # that never completed and sorted by start.
    u_ops: list[tuple[int, Op, Op | None, Call]] = []
    dropped = 0
    for op in history:
        kind = op.type
        if kind == "invoke":
            p = op.process
            if p in current:
                if current[p] is not _SKIP:
                    _malformed(history)  # still open, or retired
                continue
            current[p] = op
            continue
        inv: Any = pop(op.process, None)
        if inv.__class__ is not Op:
            if inv is _SKIP:
                current[NEMESIS] = _SKIP
                continue
            _malformed(history)  # nothing open: idle or retired
        call = call_of(inv, op)
        if call is None:
            dropped += 1
        elif kind == "info":
            current[op.process] = _RETIRED
            u_ops.append((inv.index, inv, op, _uncertain(call) if call[2] else call))
        elif call[2]:
            calls.append(call)
            starts.append(inv.index)
            ends.append(op.index)
            invokes.append(inv)
            completions.append(op)
        else:
            u_ops.append((inv.index, inv, op, call))
    pending = [v for v in current.values() if v.__class__ is Op]
    if pending:
        pending.sort(key=_index)  # in order of invocation
        for inv in pending:
            call = call_of(inv, None)
            if call is None:
                dropped += 1
            else:
                u_ops.append((inv.index, inv, None, _uncertain(call)))
    n = len(calls)
    if u_ops:
        u_ops.sort(key=_first)
        for start, inv, comp, call in u_ops:
            calls.append(call)
            starts.append(start)
            invokes.append(inv)
            completions.append(comp)
        ends += [INF] * len(u_ops)
    return Problem(label, model.init(), calls, starts, ends, invokes, completions, n, dropped)


_SKIP: Final = object()
_RETIRED: Final = object()


def _uncertain(call: Call) -> Call:
    return call._replace(certain=False) if call[2] else call


def _first(t: tuple[int, Any, Any, Any]) -> int:
    return t[0]


_index: Final = attrgetter("index")


def _malformed(history: History) -> None:
    History(op for op in history if op.process != NEMESIS).pairs()  # raises, naming the op
    raise MalformedHistory("the history breaks the op semantics")
