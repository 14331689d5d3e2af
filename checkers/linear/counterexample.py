"""Counterexamples: why a partition is not linearizable, as data and as sentences.

Built from what the search already found (the deepest configuration, its forced entry
and the longest partial linearizations) and its masks: the window is read off the
failing entry's candidate mask, and the rest of a lazily compiled partition is only
looked at (classes, no compilation) when the explanation needs to know what it produces.
Producing it never re-runs the search.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable
from typing import Any

from checkers.linear.linearization import steps
from checkers.linear.model import ANY, NOTHING, Call, Model
from checkers.linear.prepare import INF, Entry, Problem
from checkers.linear.search import Search, SearchResult
from core.ops import Op

TAIL = 8  # ops of each partial linearization shown in full
_SCALARS = frozenset({bool, int, float, str})


class _View:
    """The searched entries by search number, built into records only when reported."""

    def __init__(self, problem: Problem, search: Search) -> None:
        self.problem = problem
        self.search = search
        self.model = search.model
        self.hint = search.hint  # entry -> its hint
        self._cache: dict[int, Entry] = {}
        self._ops: dict[int, dict[str, Any]] = {}
        self._described: dict[Call, str] = {}  # calls are often shared: words once

    def __call__(self, k: int) -> Entry:
        e = self._cache.get(k)
        if e is None:
            e = self._cache[k] = self.problem.entry(self.search.index[k])
        return e

    def __len__(self) -> int:
        return len(self.search.index)

    def start(self, k: int) -> int:
        return self.search.starts[k]

    def end(self, k: int) -> int:
        return self.search.ends[k]

    def op(self, k: int) -> dict[str, Any]:
        """Entry ``k`` as ``op_dict`` gives it: built once (from the problem's columns,
        no record needed), then copied for each further use (no dict appears twice in a
        report)."""
        d = self._ops.get(k)
        if d is not None:
            return dict(d)
        problem = self.problem
        i = self.search.index[k]
        call = problem.calls[i]
        text = self._described.get(call)
        if text is None:
            text = self._described[call] = call_words(self.model, call)
        certain = problem.ends[i] != INF
        d = self._ops[k] = _record(problem.invokes[i], problem.completions[i], text, certain)
        return d


def counterexample(problem: Problem, search: Search, result: SearchResult) -> dict[str, Any]:
    """A JSON-able account of an invalid partition: the op that cannot be linearized
    (``op``), the state before it and the state it ``requires``, the longest partial
    linearizations (``linearizations``: op indices, the last few ops in full, the state
    they leave, and their ``steps``: each op's linearization point and the state it
    leaves), the ``window`` of concurrent ops around the contradiction, and
    ``sentences``. Times are in ``time_unit`` (ns, or event positions)."""
    v = _View(problem, search)
    model = v.model
    starts = search.starts  # each entry's invocation index
    x = v(result.failed)
    path, state = result.paths[0] if result.paths else ([], problem.init)
    hint = v.hint(result.failed)
    setter = _last_setter(v, path)
    window = _window(v, result.failed, setter)
    index = search.index
    invokes = problem.invokes
    completions = problem.completions
    window_invokes = [invokes[index[k]] for k in window]
    positional = True
    for k, inv in zip(window, window_invokes, strict=True):
        c = completions[index[k]]
        if inv.time != inv.index or (c is not None and c.time != c.index):
            positional = False
            break
    t = Times(positional)
    data: dict[str, Any] = {
        "partition": jsonable(problem.label),
        "op": v.op(result.failed),
        "state_before": jsonable(state),
        "state_before_text": state_words(model, state),
        "requires": None if hint.requires is NOTHING else jsonable(hint.requires),
        "linearizations": [
            {
                "length": len(p),
                "ops": [starts[k] for k in p],
                "tail": [v.op(k) for k in p[-TAIL:]],
                "state_after": jsonable(s),
                "state_after_text": state_words(model, s),
                "steps": steps(problem, index, p, model),
            }
            for p, s in result.paths
        ],
        "window": {
            "start": min([inv.time for inv in window_invokes]),
            "end": _end_time(x),
            "ops": [v.op(k) for k in window],
        },
        "time_unit": "event" if t.positional else "ns",
    }
    data["sentences"] = _sentences(v, result, t)
    return data


def sentences(problem: Problem, search: Search, result: SearchResult) -> list[str]:
    """Plain sentences saying which op cannot be linearized and why."""
    v = _View(problem, search)
    return _sentences(v, result, Times(_positional(v(result.failed))))


def _sentences(v: _View, result: SearchResult, t: Times) -> list[str]:
    model = v.model
    problem = v.problem
    x = v(result.failed)
    path, state = result.paths[0] if result.paths else ([], problem.init)
    where = "" if problem.label is None else f" (key {problem.label!r})"
    first = (
        f"Not linearizable{where}: {_who(x)} {call_words(model, x.call)} "
        f"({t.span(x)}) cannot take effect at any point of its interval."
    )
    need = v.hint(result.failed).requires
    if need is NOTHING:
        return [
            first,
            f"The longest legal order of the earlier operations ({len(path)} ops) leaves "
            f"the state {state_words(model, state)}, in which it is illegal, and no "
            "reordering of the operations concurrent with it helps.",
        ]
    why = _why(v, result.failed, need, t)
    if why is None:
        why = (
            f"It needs the state {state_words(model, need)}, but no order of the operations "
            f"concurrent with it leaves that state when it takes effect; the longest legal "
            f"order ({len(path)} ops) leaves {state_words(model, state)}."
        )
    return [first, why]


def _why(v: _View, failed: int, need: Hashable, t: Times) -> str | None:
    """The classic explanation when it applies: the needed state was never produced, or
    every producer had been overwritten before the failed op began. None otherwise."""
    model = v.model
    search = v.search
    if search.any_mask & ~(1 << failed):
        return None  # some op's effect is not one known state: no simple story
    need_sid = search.sid_of.get(need, -2)
    produced, starts, ends = search.produced_at, search.starts, search.ends
    producers = _members(search.producers.get(need_sid, 0) & ~(1 << failed))
    x_start = starts[failed]
    if any(ends[k] >= x_start for k in producers):
        return None  # a producer is concurrent: the explanation is an ordering one
    # Entries not compiled (the search stopped before them) all return after the failed
    # one began: one producing an unknown state or the state needed ends the story.
    if search.rest_produces(need_sid):
        return None
    if not producers and v.problem.init != need:
        return (
            f"It needs the state {state_words(model, need)}, but no operation could produce it "
            f"(the initial state is {state_words(model, v.problem.init)})."
        )
    last_end = max((ends[k] for k in producers), default=-1)
    # Only certain entries returning before x_start: a prefix (in order of return).
    before = bisect_left(ends, x_start, 0, search.n_certain)
    overwriters = [
        k
        for k in range(before)
        if produced(k) >= 0 and produced(k) != need_sid and last_end < starts[k]
    ]
    if not overwriters:
        return None
    w = max(overwriters, key=ends.__getitem__)
    we = v(w)
    if not producers:
        return (
            f"It needs the state {state_words(model, need)}, the initial one, but "
            f"{_who(we)}'s {call_words(model, we.call)} had changed it to "
            f"{state_words(model, search.states[produced(w)])}, completing at "
            f"{t.at(_end_time(we))}, before it began."
        )
    last = v(max(producers, key=ends.__getitem__))
    what = call_words(model, last.call)
    lead = f"the only {what} ({_who(last)}, completed at {t.at(_end_time(last))})"
    if len(producers) > 1:
        lead = f"every {what}, the last by {_who(last)} completing at {t.at(_end_time(last))},"
    return (
        f"It needs the state {state_words(model, need)}, but {lead} had been overwritten by "
        f"{_who(we)}'s {call_words(model, we.call)}, which completed at {t.at(_end_time(we))}, "
        "before it began."
    )


def _last_setter(v: _View, path: list[int]) -> int | None:
    for k in reversed(path):
        if not v.hint(k).readonly:
            return k
    return None


def _window(v: _View, failed: int, setter: int | None) -> list[int]:
    """The entries around the contradiction: the failing one, the last state change
    before it in the longest partial linearization, and every entry overlapping the
    interval from the earlier of their invocations to the failing entry's return
    (uncertain ones only when they could produce the state it needs).

    The overlapping entries are those invoked before the failing one returned (its
    candidate mask: the failing entry is certain) that return after the interval
    starts (certain entries are in order of return: a bisection), so only they are
    looked at."""
    search = v.search
    starts, ends, hint = search.starts, search.ends, v.hint
    x_start = starts[failed]
    lo = x_start if setter is None else min(x_start, starts[setter])
    need = hint(failed).requires
    base = bisect_right(ends, lo, 0, search.n_certain)
    inside = search.callable[failed] >> base
    out = [k for k in (failed, setter) if k is not None]
    while inside:
        low = inside & -inside
        inside ^= low
        k = base + low.bit_length() - 1
        if k in (failed, setter):
            continue
        if (
            ends[k] != INF
            or starts[k] >= lo
            or (need is not NOTHING and hint(k).produces in (need, ANY))
        ):
            out.append(k)
    return sorted(out, key=starts.__getitem__)


def _positional(e: Entry) -> bool:
    """Whether times are positions (formats that record only order), not nanoseconds."""
    c = e.completion
    return e.invoke.time == e.invoke.index and (c is None or c.time == c.index)


def _members(bits: int) -> list[int]:
    """The positions of the set bits, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        bits ^= low
        out.append(low.bit_length() - 1)
    return out


def op_dict(model: Model, e: Entry) -> dict[str, Any]:
    """One operation for reports: who, what, when, how it ended."""
    return _op_dict(e, call_words(model, e.call))


def _op_dict(e: Entry, call: str) -> dict[str, Any]:
    return _record(e.invoke, e.completion, call, e.end != INF)


def _record(inv: Op, comp: Op | None, call: str, certain: bool) -> dict[str, Any]:
    process = inv.process
    if comp is None:
        value = inv.value
        kind = "pending"
        done = None
    else:
        value = comp.value
        if value is None:
            value = inv.value
        kind = comp.type
        done = comp.time
    return {
        "index": inv.index,
        "process": process if type(process) in _SCALARS else jsonable(process),
        "f": inv.f,
        "value": value if value is None or type(value) in _SCALARS else jsonable(value),
        "call": call,
        "type": kind,
        "certain": certain,
        "invoke_time": inv.time,
        "complete_time": done,
    }


def jsonable(value: Any) -> Any:
    """A JSON-friendly copy (tuples and sets become lists, sentinels strings)."""
    if value is None or type(value) in _SCALARS:
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return repr(value)


def call_words(model: Model, call: Call) -> str:
    describe = getattr(model, "describe_call", None)
    return describe(call) if describe is not None else f"{call.input!r} -> {call.output!r}"


def state_words(model: Model, state: Any) -> str:
    describe = getattr(model, "describe_state", None)
    return describe(state) if describe is not None else repr(state)


def _who(e: Entry) -> str:
    return f"process {e.invoke.process}"


def _end_time(e: Entry) -> int | None:
    return e.completion.time if e.completion is not None else None


class Times:
    """Times in words: seconds for our histories, event numbers for order-only formats."""

    def __init__(self, positional: bool) -> None:
        self.positional = positional

    def at(self, t: int | None) -> str:
        if t is None:
            return "never"
        return f"event {t}" if self.positional else f"t={t / 1e9:.3f} s"

    def span(self, e: Entry) -> str:
        end = _end_time(e)
        if end is None:
            return f"invoked at {self.at(e.invoke.time)}, never completed"
        return f"invoked at {self.at(e.invoke.time)}, completed at {self.at(end)}"
