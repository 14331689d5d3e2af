"""A partial linearization step by step, for reports: where each op takes effect and the
model state it leaves.

The search keeps the longest partial linearizations as orders of entries and the state at
their end (``SearchResult.paths``); a reader also wants porcupine's view: the point of
each op's interval at which it takes effect and the state before and after it. Both follow
from the order alone, so they are computed here, after an invalid verdict, by replaying
the model along the order: the search itself is not touched and a valid history never
pays for it.

The linearization point of an op is the latest invocation among it and the ops ordered
before it: a legal order respects real time, so every op ordered before an op was invoked
before that op returned, and the point lies inside the op's interval (at its invocation
or later, at its return or earlier). Points never go back, so drawn in order they make
the line porcupine draws through a linearization.
"""

from __future__ import annotations

from typing import Any

from checkers.linear.model import Model
from checkers.linear.prepare import Problem

STEPS = 2000
"""The steps of a linearization kept for a report: the last ones, nearest the op that
cannot be linearized (the replay goes over the whole order to know the states)."""


def steps(
    problem: Problem, index: list[int], path: list[int], model: Model, limit: int = STEPS
) -> dict[str, Any]:
    """The last ``limit`` steps of the linearization ``path`` (search entry numbers, in
    order; ``index`` maps them to the problem's entries) as columns: ``index`` (the op's
    history index), ``at`` (its linearization point, in the history's time unit) and
    ``state`` (the state it leaves, an index into ``states``, the state texts); ``first``
    is the position in the order of the first step kept, ``before`` the state before it.
    """
    describe = getattr(model, "describe_state", None)
    texts: dict[Any, int] = {}

    def text(state: Any) -> int:
        words = describe(state) if describe is not None else repr(state)
        return texts.setdefault(words, len(texts))

    first = max(0, len(path) - limit)
    state: Any = problem.init
    point = None
    cols: dict[str, list[Any]] = {"index": [], "at": [], "state": []}
    before = text(state) if first == 0 else -1
    for n, k in enumerate(path):
        i = index[k]
        inv = problem.invokes[i]
        call = problem.calls[i]
        legal, state = model.step(state, call.input, call.output)
        if not legal:  # not a legal order after all: stop where it stops being one
            break
        point = inv.time if point is None or inv.time > point else point
        if n < first:
            if n == first - 1:
                before = text(state)
            continue
        cols["index"].append(inv.index)
        cols["at"].append(point)
        cols["state"].append(text(state))
    return {"first": first, "before": before, **cols, "states": list(texts)}
