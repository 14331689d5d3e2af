"""Checking a register's history from where an earlier check of its prefix left off.

A check during the run (``harness.live_check``) proves each key's growing history again
and again; the final check need not search it all once more. At a *cut* of a key's
history, a point where every operation invoked before it has completed (``ok`` or
``fail``; an ``info`` one may take effect at any later time, so no cut follows it), each
operation after the cut follows each operation before it in real time: a linearization
of the whole is one of the prefix, then one of the rest from the state the first left.
So a ``Cut`` keeps the prefix (its operations, compared whole when reused) and the states
a linearization of it can end in, each proven by the checker: the prefix followed by a
compare-and-set of that value onto itself, invoked after the cut, is linearizable. The
states found are some of those the prefix can end in, never one it cannot: the rest of
the history linearizable from one of them proves the whole valid. Nothing here decides
an invalid verdict: a key the rest does not prove from its cut is checked whole.

Register models only (``RegisterModel``: a write sets the state, a cas of a value onto
itself reads it); any other model is checked whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers.linear.models.register import RegisterModel
from core.history import History
from core.ops import NEMESIS, Op

Check = Callable[[History, float | None], Any]
"""The check of a sub-history within seconds: True, False or "unknown" (the checker's)."""

PROBE: Final = -1
"""The process of the operations this module adds (a run's clients are numbered from 0)."""
MAX_STATES: Final = 8
"""States kept at a cut at most (more: fewer kept, each still proven)."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A key's history proven up to a cut: its first operations (``ops``, client events in
    history order) and the states a linearization of them can end in (each proven)."""

    ops: tuple[Op, ...]
    states: tuple[Any, ...]


def latest_cut(ops: Sequence[Op], after: int = 0) -> int | None:
    """The position of the latest cut of ``ops`` (one key's client events) past ``after``:
    every invocation before it completed ``ok`` or ``fail``; none after an ``info`` or an
    invocation still open. None: no cut past ``after``."""
    open_: set[Any] = set()
    cut = None
    for i, op in enumerate(ops):
        if op.type == "invoke":
            open_.add(op.process)
            continue
        if op.type == "info" or op.process not in open_:
            break
        open_.discard(op.process)
        if not open_ and i + 1 > after:
            cut = i + 1
    return cut


def advance(
    cut: Cut | None, ops: Sequence[Op], model: Any, check: Check, seconds: float
) -> Cut | None:
    """The cut of ``ops`` (one key's events so far, proven linearizable up to their end
    or not) moved to their latest cut, its end states proven from ``cut``'s (None: from
    the model's initial state); ``cut`` itself where none is later, or where no state is
    proven within ``seconds``."""
    if not isinstance(model, RegisterModel):
        return cut
    done = 0 if cut is None else len(cut.ops)
    at = latest_cut(ops, done)
    if at is None or at <= done or tuple(ops[:done]) != (() if cut is None else cut.ops):
        return cut
    starts = (model.initial,) if cut is None else cut.states
    segment = tuple(ops[done:at])
    deadline = time.monotonic() + seconds
    ends: list[Any] = []
    for v in _candidates(segment, starts):
        for s in starts:
            left = deadline - time.monotonic()
            if left <= 0:
                return cut
            sub = _from(s, model, (*segment, *_probe(v, segment)))
            if sub is not None and check(sub, left) is True:
                ends.append(v)
                break
        if len(ends) >= MAX_STATES:
            break
    return Cut(tuple(ops[:at]), tuple(ends)) if ends else cut


def proven_from(cut: Cut, ops: Sequence[Op], model: Any, check: Check, seconds: float) -> bool:
    """Whether ``ops`` (one key's events, starting with ``cut``'s) are linearizable as
    proven from the cut: the rest from one of its states. False: not proven so (the key is
    to be checked whole; it may still be linearizable)."""
    n = len(cut.ops)
    if not isinstance(model, RegisterModel) or tuple(ops[:n]) != cut.ops:
        return False
    rest = tuple(ops[n:])
    deadline = time.monotonic() + seconds
    for s in cut.states:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sub = _from(s, model, rest)
        if sub is not None and check(sub, left) is True:
            return True
    return False


def resume(
    history: History, model: Any, cuts: Mapping[Any, Cut], check: Check, seconds: float
) -> tuple[History, dict[str, Any]]:
    """``history`` (client ops) without the keys proven from their cut (``proven_from``),
    and what was reused: ``partitions`` proven so, their ``ops`` (invocations), of which
    ``searched`` after the cuts, and ``elapsed_s``."""
    started = time.monotonic()
    deadline = started + seconds
    keys = history.by_key()
    done: set[Any] = set()
    ops = searched = 0
    for key, cut in cuts.items():
        mine = keys.get(key)
        left = deadline - time.monotonic()
        if mine is None or left <= 0 or not proven_from(cut, mine.ops, model, check, left):
            continue
        done.add(key)
        ops += sum(1 for op in mine if op.type == "invoke")
        searched += sum(1 for op in mine.ops[len(cut.ops) :] if op.type == "invoke")
    kept = History(
        op
        for op in history
        if op.process == NEMESIS or not isinstance(op.key, Hashable) or op.key not in done
    )
    reused = {
        "partitions": len(done),
        "ops": ops,
        "searched": searched,
        "elapsed_s": round(time.monotonic() - started, 6),
    }
    return kept, reused


def _candidates(segment: Sequence[Op], starts: Sequence[Any]) -> list[Any]:
    """The states ``segment`` (completed operations) may end in: the values of the changes
    not certainly overwritten (none began after it completed), else its start states."""
    invoked: dict[Any, int] = {}
    changes: list[tuple[int, int, Any]] = []  # invoked at, completed at, value
    for i, op in enumerate(segment):
        if op.type == "invoke":
            invoked[op.process] = i
        elif op.type == "ok" and op.f in ("write", "cas"):
            v = op.value[1] if op.f == "cas" and isinstance(op.value, list | tuple) else op.value
            changes.append((invoked[op.process], i, v))
    if not changes:
        return list(starts)
    last_start = max(c[0] for c in changes)
    out: list[Any] = []
    for _, end, v in sorted(changes, key=lambda c: -c[1]):
        if end > last_start and v not in out:
            out.append(v)
    return out


def _probe(v: Any, segment: Sequence[Op]) -> tuple[Op, Op]:
    """A compare-and-set of ``v`` onto itself invoked after ``segment``: legal only in
    state ``v``, which it leaves as it was."""
    last = segment[-1]
    t, k = last.time, last.key
    return (
        Op(index=0, time=t, process=PROBE, type="invoke", f="cas", value=[v, v], key=k),
        Op(index=0, time=t, process=PROBE, type="ok", f="cas", value=[v, v], key=k),
    )


def _from(state: Any, model: RegisterModel, ops: Sequence[Op]) -> History | None:
    """``ops`` from ``state``: as they are in the model's initial state, else after a write
    of it completed before them (None: a nil, which some dialects do not read as written),
    numbered anew in order (the search orders operations in real time by their index)."""
    if ops and not (state == model.initial and type(state) is type(model.initial)):
        if state is None:
            return None
        t, k = ops[0].time, ops[0].key
        ops = (
            Op(index=0, time=t, process=PROBE, type="invoke", f="write", value=state, key=k),
            Op(index=0, time=t, process=PROBE, type="ok", f="write", value=state, key=k),
            *ops,
        )
    return History(op.with_(index=i) for i, op in enumerate(ops))
