"""Shrinking a violation that rests on client operations: the fewest of them (and of the
notifications a watcher's ``collect`` returned in its value) that still show it.

For the checkers whose evidence is the history: unique ids (a duplicate id: the two
operations handed it), the lock-free workloads' guarded writes (two accepted writes on one
basis), watch delivery (a change missed, repeated or reordered: the write and the
watcher's notifications around it) and service discovery (a dead instance still listed:
its registration and the listing). Each checker says what violations a result of its
names (``Witness``: one ``Violation`` each), and the shrink keeps every fault and every
client event, and drops:

1. whole operations (delta debugging, ``checkers.ddmin``): an invocation with its
   completion, never one without the other. It starts from the operations the violation
   names; when those alone no longer show it, it first finds the fewest others they need
   (a registration, a subscription), then tries dropping the named ones too;
2. then single items of a kept operation's list value (a watcher's notifications).

A candidate still shows the violation when the checker itself (``judge``, the function
whose result is being shrunk) names a violation of the same kind and key among the same
operations or fewer of them (``Violation.within``): a duplicate id handed to three
operations is still itself in two of them, never in two others. The result is judged once
more, whole, before it is given (never given when that judgement disagrees); it is
1-minimal unless a bound of ``checkers.shrinking`` stopped it, said not minimal and why.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from checkers.anomalies import KEY, KINDS
from checkers.ddmin import ddmin
from checkers.record import RunRecord
from checkers.result import CheckResult
from checkers.shrinking import Judge, Search
from core.history import History
from core.ops import NEMESIS, Op


@dataclass(frozen=True, slots=True)
class Violation:
    """One violation a result names: its ``kind`` and what makes it itself (``key``: the
    id, the basis, the watcher and change, the dead member), the operations it involves
    (``who``: each as its process and invocation time; empty: it names none), the words
    a report calls it (``label``) and its sentence."""

    kind: str
    key: Hashable
    who: frozenset[tuple[Any, Any]]
    label: str
    sentence: str

    def within(self, wanted: Violation) -> bool:
        """Whether this is ``wanted`` again, shown by its operations or fewer of them."""
        same = (self.kind, self.key) == (wanted.kind, wanted.key)
        return same and self.who <= wanted.who and (bool(self.who) or not wanted.who)


Witness = Callable[[CheckResult], list[Violation]]
"""The violations one of a checker's results names, in its order (none when it is not
invalid)."""


def named_violations(result: CheckResult) -> list[Violation]:
    """The ``Witness`` of a checker that names its anomalies (``checkers.anomalies``):
    each with its kind, key and operations."""
    out = []
    for a in result.details.get(KEY) or ():
        if not isinstance(a, dict) or a.get("kind") not in KINDS:
            continue
        involved = [x for x in a.get("involved") or () if isinstance(x, dict)]
        who = frozenset((x.get("process"), x.get("invoke_time")) for x in involved)
        key = a.get("key")
        key = key if isinstance(key, Hashable) else repr(key)
        out.append(Violation(a["kind"], key, who, KINDS[a["kind"]], str(a.get("sentence"))))
    return out


@dataclass(frozen=True, slots=True)
class Unit:
    """One operation (the history positions of its invocation and completion), or one
    item of a kept operation's list value (``item``: its position and the item's)."""

    ops: tuple[int, ...] = ()
    item: tuple[int, int] | None = None
    trimmed: bool = False
    """For an operation: its list value keeps only the items among the units."""


def units_of(history: History) -> list[Unit]:
    """The client operations of ``history``, each an invocation with its completion (or
    alone, never completed), in history order."""
    open_: dict[Any, list[int]] = {}
    out: list[list[int]] = []
    for i, op in enumerate(history):
        if op.process == NEMESIS:
            continue
        if op.type == "invoke":
            open_[op.process] = [i]
            out.append(open_[op.process])
        elif op.process in open_:
            open_.pop(op.process).append(i)
        else:
            out.append([i])  # a completion without its invocation: a unit of its own
    return [Unit(tuple(ops)) for ops in out]


Separable = Callable[[Op], bool]
"""Which operations' list values are records of their own, each item droppable alone (a
watcher's ``collect``: the notifications it got); by default none's."""


def _none(op: Op) -> bool:
    return False


def shows(result: CheckResult, witness: Witness, wanted: Violation) -> Violation | None:
    """The violation of ``result`` that is ``wanted`` again, if it names one."""
    if result.valid is not False:
        return None
    return next((v for v in witness(result) if v.within(wanted)), None)


class _Shrink:
    """One shrink of a record's operations for one violation (``wanted``)."""

    def __init__(
        self,
        record: RunRecord,
        judge: Judge,
        witness: Witness,
        wanted: Violation,
        separable: Separable,
    ) -> None:
        self.record, self.judge, self.witness, self.wanted = record, judge, witness, wanted
        self.separable = separable
        self.units = units_of(record.history)
        self.search = Search(record, self.shows, self.size, self.units)

    def items(self, op: Op) -> list[Any] | None:
        """An operation's list value when its items are records of their own, else None."""
        value = op.value
        return value if isinstance(value, list) and value and self.separable(op) else None

    def size(self, units: Sequence[Unit]) -> int:
        """Operations and items kept: an untrimmed operation counts its items too."""
        h = self.record.history
        whole = sum(len(self.items(h[i]) or ()) for u in units if not u.trimmed for i in u.ops)
        return sum(1 for u in units if u.ops) + whole + sum(1 for u in units if u.item)

    def sub(self, units: Sequence[Unit]) -> RunRecord:
        """The record with only ``units``' operations and items (faults, client events
        and the service's events all kept)."""
        h = self.record.history
        keep = {i for u in units for i in u.ops}
        trimmed = {i for u in units if u.trimmed for i in u.ops}
        items: dict[int, set[int]] = {}
        for u in units:
            if u.item is not None:
                items.setdefault(u.item[0], set()).add(u.item[1])
        ops = []
        for i, op in enumerate(h):
            if op.process == NEMESIS:
                ops.append(op)
            elif i in keep:
                values = self.items(op)
                if i in trimmed and values is not None:
                    mine = items.get(i, set())
                    op = op.with_(value=[v for j, v in enumerate(values) if j in mine])
                ops.append(op)
        return replace(self.record, history=History(ops))

    def shows(self, units: list[Unit]) -> bool:
        """Whether the checker still names the violation in ``units``' records."""
        return shows(self.judge(self.sub(units)), self.witness, self.wanted) is not None

    def run(self) -> list[Unit]:
        """Operations (from those the violation names, with the fewest others they need),
        then the items of the list values kept."""
        fails = self.search.fails
        named = [u for u in self.units if self._named(u)]
        seed = named
        if not named or not fails(named):
            given = set(named)
            rest = [u for u in self.units if u not in given]
            seed = named + ddmin(rest, lambda c: fails(named + c))
        kept = ddmin(seed, fails)
        h = self.record.history
        items = [
            Unit(item=(i, j))
            for u in kept
            for i in u.ops
            for j in range(len(self.items(h[i]) or ()))
        ]
        if not items:
            return kept
        whole = [replace(u, trimmed=True) for u in kept]

        def with_(c: list[Unit]) -> bool:
            return fails(whole + c)

        return whole + ([] if with_([]) else ddmin(items, with_))

    def _named(self, u: Unit) -> bool:
        h = self.record.history
        return bool(u.ops) and (h[u.ops[0]].process, h[u.ops[0]].time) in self.wanted.who


def shrink_result(
    result: CheckResult,
    record: RunRecord,
    judge: Judge,
    witness: Witness,
    separable: Separable = _none,
) -> CheckResult:
    """``result`` (``judge``'s of ``record``) with ``shrunk`` in its details when it is
    invalid and names a violation: the first one's fewest operations (and items),
    confirmed by ``judge``; or ``shrunk_error``, why there is none. Any other result is
    returned as it is."""
    named = witness(result) if result.valid is False else []
    if not named:
        return result
    s = _Shrink(record, judge, witness, named[0], separable)
    kept = s.search.run(s.run)
    sub = s.sub(kept)
    confirmed = shows(judge(sub), witness, named[0])
    if confirmed is None:
        why = "the checker did not confirm the shrunk records"
        return msgspec.structs.replace(result, details={**result.details, "shrunk_error": why})
    ops = [op for op in sub.history if op.process != NEMESIS]
    shrunk: dict[str, Any] = {
        "kind": confirmed.kind,
        "label": confirmed.label,
        "ops": [op.to_dict() for op in ops],
        "operations": sum(1 for op in ops if op.type == "invoke"),
        "of": sum(1 for op in record.history if op.type == "invoke" and op.process != NEMESIS),
        **s.search.said(),
        "confirmed_by": f"the {result.checker} checker",
        "sentence": confirmed.sentence,
    }
    of_items = sum(len(s.items(op) or ()) for op in record.history if op.process != NEMESIS)
    if of_items:
        shrunk["items"] = sum(len(s.items(op) or ()) for op in ops)
        shrunk["of_items"] = of_items
    return msgspec.structs.replace(result, details={**result.details, "shrunk": shrunk})
