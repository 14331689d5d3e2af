"""The shrunk counterexample, where a report opens: the fewest operations of an invalid
linearizability result that still cannot be ordered (``checkers.linear.shrink``, in the
result's ``shrunk``), one row per operation, with the whole history a click away (the
timeline under it, and the history file when the page has one beside it).
"""

from __future__ import annotations

from typing import Any

from core.formats.edn import dumps
from harness.report._explain import LINEARIZABILITY, timer
from harness.report._html import esc, table, tag

_HEADERS = ("#", "process", "operation", "outcome", "invoked", "completed")


def shrunk_section(results: dict[str, Any] | None, history_file: str | None = None) -> str:
    """The section of the linearizability result's shrunk counterexample ("" without
    one); ``history_file``: the history's file, linked beside the timeline."""
    r = ((results or {}).get("checkers") or {}).get(LINEARIZABILITY) or {}
    shrunk = r.get("shrunk")
    if r.get("valid") is not False or not isinstance(shrunk, dict) or not shrunk.get("ops"):
        return ""
    events = shrunk["ops"]
    positional = all(e.get("time") == e.get("index") for e in events)
    at = timer("event" if positional else "ns")
    n = shrunk.get("operations", 0)
    words = "operation cannot" if n == 1 else "operations cannot"
    where = f" (key {shrunk['key']})" if shrunk.get("key") is not None else ""
    lead = (
        f"These {n} {words} be ordered{where}: shrunk from {shrunk.get('of', 0):,}, "
        f"confirmed by {shrunk.get('confirmed_by', 'the plain search')}"
    )
    lead += f"; {shrunk['not_minimal']}." if shrunk.get("not_minimal") else "."
    whole = tag("a", "the timeline", href="#figure")
    if history_file:
        whole += " · " + tag("a", esc(history_file), href=history_file)
    body = (
        tag("h2", "The smallest story")
        + tag("p", esc(lead), class_="explanation", id="shrunk-lead")
        + table(_HEADERS, [_row(op, at) for op in _operations(events)], "ops", id_="shrunk-ops")
        + tag("p", "The whole history: " + whole, class_="muted")
    )
    return tag("section", body, class_="explain", id="shrunk")


def _operations(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The events as operations: each invocation with its completion (None: never)."""
    out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    open_: dict[Any, int] = {}
    for e in events:
        if e.get("type") == "invoke":
            open_[e.get("process")] = len(out)
            out.append((e, None))
        elif e.get("process") in open_:
            at = open_.pop(e.get("process"))
            out[at] = (out[at][0], e)
    return out


def _row(op: tuple[dict[str, Any], dict[str, Any] | None], at: Any) -> list[str]:
    inv, comp = op
    words = str(inv.get("f"))
    if inv.get("value") is not None:
        words += f" {dumps(inv['value'])}"
    changed = inv.get("value") is None or (comp is not None and comp.get("value") != inv["value"])
    if comp is not None and comp.get("type") == "ok" and changed:
        words += f" \u2192 {dumps(comp.get('value'))}"
    if inv.get("key") is not None:
        words += f" (key {inv['key']})"
    outcome = "never completed" if comp is None else str(comp.get("type"))
    return [
        esc(inv.get("index")),
        esc(f"p{inv.get('process')}"),
        tag("code", esc(words)),
        tag("span", esc(outcome), class_=f"outcome {outcome}"),
        esc(at(inv.get("time"))),
        esc(at(None if comp is None else comp.get("time"))),
    ]
