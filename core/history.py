"""Histories: ordered operations, paired invocations and completions, split by key.

The op semantics every history keeps (Jepsen's), for the ops of client processes (the
nemesis records faults as it likes: a lone ``info``, a start and its completion, one fault
at a time: it never invokes while its last invocation is open):

- a process invokes only when it has nothing open, and never again after an op of it
  ended ``info`` (its outcome is unknown: the runner gives its worker a new process);
- a completion completes the open invocation of its process, with the same ``f`` and
  ``key``, no earlier in time.

``first_break`` finds the first op that breaks them; the readers refuse such a file
(``core.formats``) and ``History.pairs`` raises ``MalformedHistory``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import msgspec

from core.ops import NEMESIS, Op, Process


class MalformedHistory(ValueError):
    """A history that breaks the op semantics (a completion without invocation, a process
    invoking twice at once, a process invoking again after an ``info``, a completion of
    another ``f`` or key than its invocation's, or timed before it)."""


class Break(NamedTuple):
    """The first op of a history that breaks the op semantics: its ``position`` in the
    history, what is wrong (``kind``: ``open``, ``retired``, ``orphan``, ``f``, ``key``,
    ``time``) and the position of the op it conflicts with (-1: none)."""

    position: int
    kind: str
    other: int = -1

    def words(self, ops: Sequence[Op], where: Callable[[int], str]) -> str:
        """What is wrong, naming the other op by ``where(position)`` ("line 3", "op 2")."""
        op = ops[self.position]
        p, t = op.process, op.type
        if self.kind == "orphan":
            return f"a completion ({t}) of process {p}, which has no open invocation"
        there = where(self.other)
        inv = ops[self.other]
        if self.kind == "open":
            return f"process {p} invokes again while its op at {there} is still open"
        if self.kind == "retired":
            return f"process {p} invokes again after an earlier op of it ended 'info' (at {there})"
        if self.kind == "f":
            return f"process {p}'s {t} {op.f!r} completes its invocation {inv.f!r} at {there}"
        if self.kind == "key":
            return f"process {p}'s {t} has key {op.key!r}, its invocation at {there} {inv.key!r}"
        return (
            f"process {p}'s {t} at time {op.time} comes before its invocation at {there} "
            f"(time {inv.time})"
        )


def first_break(ops: Sequence[Op]) -> Break | None:
    """The first op of ``ops`` that breaks the op semantics (see the module's docstring),
    or None. (``core/formats/_scan.c`` finds the same position in C.)"""
    open_: dict[Process, int] = {}  # process -> position of its open invocation
    retired: dict[Process, int] = {}  # process -> position of its op that ended info
    for i, op in enumerate(ops):
        p = op.process
        if p == NEMESIS:  # its faults in turn, completed or not (a lone info is a note)
            fault = open_.pop(p, -1)
            if op.type == "invoke":
                if fault >= 0:
                    return Break(i, "open", fault)
                open_[p] = i
            continue
        if op.type == "invoke":
            j = open_.get(p)
            if j is not None:
                return Break(i, "open", j)
            j = retired.get(p)
            if j is not None:
                return Break(i, "retired", j)
            open_[p] = i
            continue
        j = open_.pop(p, -1)
        if j < 0:
            return Break(i, "orphan")
        inv = ops[j]
        if op.f != inv.f:
            return Break(i, "f", j)
        if op.key != inv.key:
            return Break(i, "key", j)
        if op.time < inv.time:
            return Break(i, "time", j)
        if op.type == "info":
            retired[p] = j
    return None


class Pair(msgspec.Struct, frozen=True, gc=False):
    """An invocation and its completion; ``completion`` is None when it never returned."""

    invoke: Op
    completion: Op | None

    @property
    def type(self) -> str:
        """ok, fail or info; an operation that never returned counts as info."""
        return self.completion.type if self.completion is not None else "info"

    @property
    def end(self) -> int | None:
        """Completion time, None for an operation that never returned."""
        return self.completion.time if self.completion is not None else None

    @property
    def value(self) -> Any:
        """The completion's value when it has one, else the invocation's."""
        if self.completion is not None and self.completion.value is not None:
            return self.completion.value
        return self.invoke.value


class History(Sequence[Op]):
    """An immutable, time-ordered sequence of ops with pairing and splitting helpers."""

    __slots__ = ("_ops", "_pairs")

    def __init__(self, ops: Iterable[Op]) -> None:
        self._ops: tuple[Op, ...] = tuple(ops)
        self._pairs: list[Pair] | None = None

    def __len__(self) -> int:
        return len(self._ops)

    def __getitem__(self, i: Any) -> Any:
        return self._ops[i]

    def __iter__(self) -> Iterator[Op]:
        return iter(self._ops)

    @property
    def ops(self) -> tuple[Op, ...]:
        """The ops, as the tuple that holds them."""
        return self._ops

    def __repr__(self) -> str:
        return f"History({len(self._ops)} ops)"

    @classmethod
    def from_events(cls, events: Iterable[dict[str, Any]]) -> History:
        """Build a history from dicts without index/time: both are assigned in order
        (time = position, for formats that record only the order of events)."""
        ops = []
        for i, e in enumerate(events):
            ops.append(
                Op(
                    index=i,
                    time=int(e.get("time", i)),
                    process=e["process"],
                    type=e["type"],
                    f=e["f"],
                    value=e.get("value"),
                    key=e.get("key"),
                    error=e.get("error"),
                    node=e.get("node"),
                )
            )
        return cls(ops)

    def pairs(self) -> list[Pair]:
        """Every invocation with its completion, in invocation order.

        Nemesis ops are paired too (a start and its completion). Raises
        MalformedHistory where the op semantics are broken.
        """
        if self._pairs is None:
            self._pairs = _pair(self._ops)
        return self._pairs

    def client_ops(self) -> History:
        return History(op for op in self._ops if op.process != NEMESIS)

    def nemesis_ops(self) -> History:
        return History(op for op in self._ops if op.process == NEMESIS)

    def by_key(self) -> dict[Any, History]:
        """Client ops split by ``key`` (ops without a key go under None)."""
        out: dict[Any, list[Op]] = {}
        for op in self._ops:
            if op.process == NEMESIS:
                continue
            out.setdefault(_hashable(op.key), []).append(op)
        return {k: History(v) for k, v in out.items()}

    def processes(self) -> list[Process]:
        seen: dict[Process, None] = {}
        for op in self._ops:
            seen.setdefault(op.process, None)
        return list(seen)


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _pair(ops: Sequence[Op]) -> list[Pair]:
    broken = first_break(ops)
    if broken is not None:
        where = broken.words(ops, lambda i: f"op {ops[i].index}")
        raise MalformedHistory(f"op {ops[broken.position].index}: {where}")
    open_: dict[Process, int] = {}
    invokes: list[Op] = []
    completions: list[Op | None] = []
    for op in ops:
        p = op.process
        if op.type == "invoke":  # nothing of the process open: ``first_break`` said so
            open_[p] = len(invokes)
            invokes.append(op)
            completions.append(None)
        elif p in open_:
            completions[open_.pop(p)] = op
        else:  # a lone nemesis info op (a fault event recorded without invocation)
            invokes.append(op)
            completions.append(op)
    return [Pair(i, c) for i, c in zip(invokes, completions, strict=True)]
