"""Histories: ordered operations, paired invocations and completions, split by key."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

from core.ops import NEMESIS, Op, Process


class MalformedHistory(ValueError):
    """A history that breaks the op semantics (a completion without invocation, a process
    invoking twice at once, a process invoking again after an ``info``)."""


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
    open_: dict[Process, int] = {}
    retired: set[Process] = set()
    invokes: list[Op] = []
    completions: list[Op | None] = []
    for op in ops:
        p = op.process
        if op.type == "invoke":
            if p in open_:
                raise MalformedHistory(
                    f"process {p} invoked op {op.index} while op "
                    f"{invokes[open_[p]].index} was still open"
                )
            if p in retired and p != NEMESIS:
                raise MalformedHistory(
                    f"process {p} invoked op {op.index} after an earlier op of it ended "
                    "'info'; a process with an unknown outcome must not invoke again"
                )
            open_[p] = len(invokes)
            invokes.append(op)
            completions.append(None)
        else:
            if p not in open_:
                if p == NEMESIS:
                    # A lone nemesis info op (a fault event recorded without invocation).
                    invokes.append(op)
                    completions.append(op)
                    continue
                raise MalformedHistory(
                    f"op {op.index} completes process {p}, which has no open invocation"
                )
            i = open_.pop(p)
            completions[i] = op
            if op.type == "info":
                retired.add(p)
    return [Pair(i, c) for i, c in zip(invokes, completions, strict=True)]
