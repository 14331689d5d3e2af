"""The plain Wing & Gong search with Lowe's memoization: the reference the optimized
search is tested against. No reductions, no hints: only ``init`` and ``step``.

The history is a list of call and return events in real-time order. The search scans it
from the front: at a call it tries to linearize that operation (step the model, remove
its call and return from the list, start again from the front), at a return it
backtracks (the operation returning there was not linearized in time). Operations of
unknown outcome have no return: they may be linearized at any point after their call,
or never. Configurations ``(linearized set, state)`` already seen are not expanded again.
"""

from __future__ import annotations

from typing import Literal

from checkers.linear.model import Model
from checkers.linear.prepare import Problem


def plain_check(
    problem: Problem, model: Model, max_steps: int | None = None
) -> bool | Literal["unknown"]:
    """True if the problem's operations are linearizable, False if not, "unknown" when
    ``max_steps`` linearization attempts did not decide."""
    entries = problem.entries
    events: list[tuple[int, int, int]] = []  # (position, is_return, entry)
    for i, e in enumerate(entries):
        events.append((e.start, 0, i))
        if e.certain:
            events.append((e.end, 1, i))
    events.sort()
    n = len(events)
    head = n  # sentinel node
    nxt = [k + 1 if k + 1 < n else -1 for k in range(n)] + [0 if n else -1]
    prv = [k - 1 if k else head for k in range(n)] + [-1]
    ret_node = [-1] * len(entries)
    for node, (_, is_ret, i) in enumerate(events):
        if is_ret:
            ret_node[i] = node

    def lift(node: int) -> None:
        for k in (node, ret_node[events[node][2]]):
            if k >= 0:
                p, q = prv[k], nxt[k]
                nxt[p] = q
                if q >= 0:
                    prv[q] = p

    def unlift(node: int) -> None:
        for k in (ret_node[events[node][2]], node):
            if k >= 0:
                p, q = prv[k], nxt[k]
                nxt[p] = k
                if q >= 0:
                    prv[q] = k

    n_certain = sum(1 for e in entries if e.certain)
    done = 0
    lin = 0
    state = problem.init
    cache: set[tuple[int, object]] = set()
    stack: list[tuple[int, object]] = []
    node = nxt[head]
    steps = 0
    while True:
        if done == n_certain:
            return True
        if node >= 0 and not events[node][1]:
            i = events[node][2]
            steps += 1
            if max_steps is not None and steps > max_steps:
                return "unknown"
            e = entries[i]
            ok, new = model.step(state, e.call.input, e.call.output)
            if ok:
                key = (lin | (1 << i), new)
                if key not in cache:
                    cache.add(key)
                    stack.append((node, state))
                    state = new
                    lin |= 1 << i
                    done += e.certain
                    lift(node)
                    node = nxt[head]
                    continue
            node = nxt[node]
            continue
        # A return (or the end of the list): backtrack.
        if not stack:
            return False
        node, state = stack.pop()
        i = events[node][2]
        lin &= ~(1 << i)
        done -= entries[i].certain
        unlift(node)
        node = nxt[node]
