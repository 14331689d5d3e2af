"""Porcupine's view of a linearizability counterexample: the longest partial
linearizations step by step.

For the timeline, ``timeline_steps`` gives each linearization's ops (their positions on
the timeline), their linearization points (microseconds) and the state each leaves (an
index into one table of state texts): the page draws the points joined in order and
shows the states before and after an op on hover. For the page, ``steps_table`` is the
side table of the longest one's last steps, ending with the op that cannot be linearized
and why. Both read ``checkers.linear.linearization``'s ``steps``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.html import esc, table, tag
from core.short_text import DASH
from harness.report._timeline import compact, us

_HEADERS = ("order", "process", "operation", "takes effect", "state before", "state after")


def timeline_steps(cx: dict[str, Any], positions: dict[Any, int]) -> dict[str, Any] | None:
    """The linearizations of a counterexample as the timeline draws them; None when it
    has none with steps (a counterexample of the unique-values path, an old results.json)."""
    states: dict[str, int] = {}
    lins = []
    for lz in cx.get("linearizations") or ():
        st = lz.get("steps")
        if not isinstance(st, dict):
            continue
        table_of = st.get("states") or []

        def state(i: int, table_of: list[str] = table_of) -> int:
            return -1 if i < 0 else states.setdefault(table_of[i], len(states))

        kept = [n for n, x in enumerate(st["index"]) if x in positions]
        lins.append(
            {
                "length": lz.get("length", len(st["index"])),
                "first": st.get("first", 0),
                "before": state(st.get("before", -1)),
                "order": [st.get("first", 0) + n + 1 for n in kept],
                "pos": [positions[st["index"][n]] for n in kept],
                "at": [us(st["at"][n]) for n in kept],
                "state": [state(st["state"][n]) for n in kept],
                "prev": [
                    state(st["state"][n - 1]) if n else state(st.get("before", -1)) for n in kept
                ],
            }
        )
    if not lins:
        return None
    return {"lins": lins, "states": list(states)}


def steps_table(cx: dict[str, Any], at: Callable[[Any], str]) -> str:
    """The longest linearization's last steps with the state before and after each, then
    the op that cannot be linearized; "" when the counterexample has no steps."""
    lins = cx.get("linearizations") or []
    st = lins[0].get("steps") if lins else None
    if not isinstance(st, dict) or not st.get("index"):
        return ""
    texts = st.get("states") or []
    by_index = {x: n for n, x in enumerate(st["index"])}
    rows = []
    for o in lins[0].get("tail") or ():
        n = by_index.get(o.get("index"))
        if n is None:
            continue
        before = st["state"][n - 1] if n else st.get("before", -1)
        rows.append(
            [
                tag(  # a click shows the op on the timeline (report.js)
                    "a", esc(st.get("first", 0) + n + 1), href="#timeline", data_x=o.get("index")
                ),
                esc(f"p{o.get('process')}"),
                tag("code", esc(o.get("call", o.get("f")))),
                esc(at(st["at"][n])),
                _state(texts, before),
                _state(texts, st["state"][n]),
            ]
        )
    op = cx.get("op") or {}
    needs = cx.get("requires")
    why = "cannot be linearized: " + (
        f"it needs the state {compact(needs)}" if needs is not None else "illegal in this state"
    )
    rows.append(
        [
            tag("a", "✗", href="#timeline", data_x=op.get("index")),
            esc(f"p{op.get('process')}"),
            tag("code", esc(op.get("call", op.get("f")))),
            tag("span", esc(why), class_="culprit"),
            tag("code", esc(cx.get("state_before_text", ""))),
            DASH,
        ]
    )
    length = lins[0].get("length", len(st["index"]))
    caption = tag(
        "p",
        esc(
            f"The longest partial linearization, step by step: its last {len(rows) - 1} of "
            f"{length} operations, each at its linearization point (drawn on the timeline as "
            "dots joined in order), then the operation that cannot follow them."
        ),
    )
    return tag("div", caption + table(_HEADERS, rows, "lin-steps"), id="lin-steps")


def _state(texts: list[str], i: int) -> str:
    return tag("code", esc(texts[i])) if 0 <= i < len(texts) else DASH
