"""A partition refuted without a search: an operation that took effect needs a state that
no operation can leave and the partition does not start in.

Every state a partition passes through is its initial state or one that some call left:
a call either leaves the state as it found it or leaves the state its hint ``produces``
(``checkers.linear.model.Hint``). So where no call's hint says ``ANY``, the states are
among the initial one and the ``produces`` of the calls, and a certain call (one that
took effect) whose hint ``requires`` a state outside them is legal at no point: no order
of the operations is legal (proof: docs/linearizability.md, "Unproduced states"). It
catches, in one pass, what the search may take hours to exhaust on a big partition: one
read of a value nothing wrote. Anything else is left to the search (``None``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final

from checkers.linear.model import ANY, NOTHING, Call, Hint, Model
from checkers.linear.prepare import Problem
from checkers.linear.unique import Verdict, _invalid, _Words

METHOD: Final = "unproduced state: an operation that took effect needs a state none leaves"


def verdict(problem: Problem, model: Model) -> Verdict | None:
    """The invalid verdict when a certain call requires an unproduced state, else None."""
    hint_of: Callable[[Call], Hint] | None = getattr(model, "hint", None)
    if hint_of is None:
        return None
    hints: dict[Call, Hint] = {}
    left: set[Hashable] = {problem.init}
    needs: list[tuple[int, Hashable]] = []
    n_certain = problem.n_certain
    for i, call in enumerate(problem.calls):
        h = hints.get(call)
        if h is None:
            h = hints[call] = hint_of(call)
        if h.produces is ANY:
            return None
        if h.produces is not NOTHING:
            left.add(h.produces)
        if i < n_certain and h.requires is not NOTHING:
            needs.append((i, h.requires))
    for i, state in needs:
        if state not in left:
            text = _Words(problem, model)
            sentence = (
                f"{text.op(i)} (invoked {text.invoked(i)}, returned {text.returned(i)}) "
                f"needs the state {text.state(state)}, which no operation leaves and the "
                "history does not start in"
            )
            return _invalid(text, [i], sentence, METHOD)
    return None
