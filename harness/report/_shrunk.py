"""The shrunk counterexample, where a report opens: the fewest operations of an invalid
linearizability result that still cannot be ordered (``checkers.linear.shrink``, in the
result's ``shrunk``), the fewest holdings and writes of a lock run that still show its
mutual-exclusion or fencing violation (``checkers.shrink_holdings``), or the fewest
operations (and a watcher's notifications) that still show another checker's violation
(``checkers.shrink_ops``: a duplicate id, two writes on one basis, a change a watcher
missed, a dead instance listed), one row per operation (and per write at the resource),
with the whole history a click away (the timeline under it, and the history file when the
page has one beside it).
"""

from __future__ import annotations

from typing import Any, Final

from checkers import discovery, election, fencing, guarded, ids, mutex, mutex_lin, watch_delivery
from checkers.anomalies import KINDS
from core.formats.edn import dumps
from core.html import esc, table, tag
from harness.report._explain import LINEARIZABILITY, timer

NOT_ORDERED: Final = "non-linearizable"
"""The kind of the owner-aware mutex check's violation: holdings that cannot be ordered."""

_HEADERS = ("#", "process", "operation", "outcome", "invoked", "completed")


SHRUNK_BY: Final = (
    LINEARIZABILITY,
    mutex.NAME,
    fencing.NAME,
    election.NAME,
    mutex_lin.NAME,
    ids.NAME,
    guarded.NAME,
    watch_delivery.NAME,
    discovery.NAME,
)
"""The checkers whose invalid result carries a shrunk counterexample, in the order a
page prefers them: linearizability's (``checkers.linear.shrink``), then the lock run's
fewest holdings and writes (``checkers.shrink_holdings``; the owner-aware mutex check's
too), then the other checkers' fewest operations (``checkers.shrink_ops``)."""


def shrunk_section(results: dict[str, Any] | None, history_file: str | None = None) -> str:
    """The section of the first shrunk counterexample of an invalid result ("" without
    one); ``history_file``: the history's file, linked beside the timeline."""
    checkers = (results or {}).get("checkers") or {}
    for name in SHRUNK_BY:
        r = checkers.get(name) or {}
        shrunk = r.get("shrunk")
        if r.get("valid") is False and isinstance(shrunk, dict) and shrunk.get("ops"):
            break
    else:
        return ""
    events = shrunk["ops"]
    positional = all(e.get("time") == e.get("index") for e in events)
    at = timer("event" if positional else "ns")
    lead = _holdings_lead(shrunk) if "holdings" in shrunk else _lead(shrunk)
    lead = _ops_lead(shrunk) if "label" in shrunk else lead
    lead += f"; {shrunk['not_minimal']}." if shrunk.get("not_minimal") else "."
    whole = tag("a", "the timeline", href="#figure")
    if history_file:
        whole += " · " + tag("a", esc(history_file), href=history_file)
    writes = shrunk.get("resource_log") or []
    body = (
        tag("h2", "The smallest story")
        + tag("p", esc(lead), class_="explanation", id="shrunk-lead")
        + table(_HEADERS, [_row(op, at) for op in _operations(events)], "ops", id_="shrunk-ops")
        + (table(_WRITE_HEADERS, [_write_row(w, at) for w in writes], "ops") if writes else "")
        + tag("p", "The whole history: " + whole, class_="muted")
    )
    return tag("section", body, class_="explain", id="shrunk")


def _lead(shrunk: dict[str, Any]) -> str:
    """``These 4 operations cannot be ordered (key 0): shrunk from 1,204, confirmed by
    the plain search``."""
    n = shrunk.get("operations", 0)
    words = "operation cannot" if n == 1 else "operations cannot"
    where = f" (key {shrunk['key']})" if shrunk.get("key") is not None else ""
    return (
        f"These {n} {words} be ordered{where}: shrunk from {shrunk.get('of', 0):,}, "
        f"confirmed by {shrunk.get('confirmed_by', 'the plain search')}"
    )


def _holdings_lead(shrunk: dict[str, Any]) -> str:
    """``These 2 holdings and 1 write still show the stale write accepted (shrunk from 96
    holdings and 92 writes, confirmed by the mutex checker)``; ``still cannot be ordered``
    for the owner-aware mutex check's: the anomaly's own sentence is the banner's, not said
    twice."""
    h, w = shrunk.get("holdings", 0), shrunk.get("writes", 0)
    tenure = str(shrunk.get("tenure") or "holding")  # an election's: leadership
    said = f"{h} {tenure}{'s' * (h != 1)} and {w} write{'s' * (w != 1)}"
    kind = str(shrunk.get("kind"))
    shows = (
        "cannot be ordered" if kind == NOT_ORDERED else f"show the {KINDS.get(kind, 'violation')}"
    )
    return (
        f"These {said} still {shows} "
        f"(shrunk from {shrunk.get('of_holdings', 0):,} {tenure}s and "
        f"{shrunk.get('of_writes', 0):,} writes, confirmed by "
        f"{shrunk.get('confirmed_by', 'the checker')})"
    )


def _ops_lead(shrunk: dict[str, Any]) -> str:
    """``These 2 operations still show the duplicate id (shrunk from 1,169 operations,
    confirmed by the ids checker)``; a watcher's notifications counted beside them."""
    n, items = shrunk.get("operations", 0), shrunk.get("items")
    said = f"{n} operation{'s' * (n != 1)}"
    of = f"{shrunk.get('of', 0):,} operations"
    if items is not None:
        said += f" and {items} notification{'s' * (items != 1)}"
        of += f" and {shrunk.get('of_items', 0):,} notifications"
    return (
        f"These {said} still show the {shrunk.get('label', 'violation')} (shrunk from {of}, "
        f"confirmed by {shrunk.get('confirmed_by', 'the checker')})"
    )


_WRITE_HEADERS = ("writer", "write at the resource", "token", "the resource", "at")


def _write_row(w: dict[str, Any], at: Any) -> list[str]:
    verdict = "accepted" if w.get("accepted") else "rejected"
    return [
        esc(f"p{w.get('writer')}"),
        tag("code", esc(str(w.get("resource")))),
        esc(w.get("token")),
        tag("span", esc(verdict), class_=f"outcome {'ok' if w.get('accepted') else 'fail'}"),
        esc(at(w.get("time"))),
    ]


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
