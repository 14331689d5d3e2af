"""Where the anomaly is on the timeline: the first view's zoom, marks and highlights.

An invalid linearizability result points at its counterexample's window: the view opens
on it, its operations are outlined and the one that cannot be linearized stands out; its
named anomaly (a stale read: the read, the overwrite, the write it read) is marked and
outlined where it happened. An
invalid mutual-exclusion result points at its first accepted stale write: the view opens
from the stale holder's acquisition to that write. Handovers are marked in any run: the
danger window on the stale holder's lane (lease expiry to its last write), the handover
delay on the next holder's (lease expiry to its acquisition).
"""

from __future__ import annotations

from typing import Any

from checkers.anomalies import KEY
from harness.report._lanes import Lanes
from harness.report._linearization import timeline_steps
from harness.report._timeline import us

_PAD = 0.12  # of the focused span, on each side
_MIN_SPAN_US = 200
_CONTEXT_SPANS = 50  # how far before the window the first view reaches for context


def annotate(results: dict[str, Any] | None, timeline: dict[str, Any], lanes: Lanes) -> None:
    """Add ``focus``, ``marks``, ``highlight``, ``culprit`` and ``lin`` (the partial
    linearizations, ``_linearization.timeline_steps``) to the timeline data."""
    checkers = (results or {}).get("checkers") or {}
    positions = {x: i for i, x in enumerate(timeline["ops"]["x"])}
    marks: list[dict[str, Any]] = []
    focus: dict[str, Any] | None = None
    highlight: list[int] = []
    culprit = -1
    steps = None
    lin = _counterexample_result(checkers)
    cx = lin.get("counterexample")
    if lin.get("valid") is False and isinstance(cx, dict) and cx.get("time_unit", "ns") == "ns":
        shown = _counterexample_ops(cx)
        highlight = sorted({positions[o["index"]] for o in shown if o["index"] in positions})
        culprit = positions.get((cx.get("op") or {}).get("index"), -1)
        steps = timeline_steps(cx, positions)
        window = cx.get("window") or {}
        s, e = us(window.get("start")), us(window.get("end"))
        if s >= 0 and e >= s:
            label = "counterexample" + (
                f" (key {cx['partition']})" if cx.get("partition") is not None else ""
            )
            marks.append({"lane": -1, "s": s, "e": e, "label": label, "kind": "window"})
            first = min([s, *(us(o["invoke_time"]) for o in shown if o.get("invoke_time"))])
            first = max(first, s - _CONTEXT_SPANS * max(e - s, _MIN_SPAN_US))
            focus = _padded(first, e, "the counterexample")
        for a in lin.get(KEY) or ():  # the named anomaly's operations, where they are
            named_mark = _named_mark(a, positions)
            if named_mark is not None:
                mark, ops = named_mark
                marks.append(mark)
                highlight = sorted(set(highlight) | set(ops))
    mutex = checkers.get("mutex") or {}
    marks += _handover_marks(mutex.get("handovers") or (), lanes)
    if focus is None:
        focus = _mutex_focus(mutex, timeline, lanes)
    if focus is not None:
        # Open on the anomaly only when it is one: a valid run opens on the whole run.
        focus["auto"] = lin.get("valid") is False or mutex.get("valid") is False
    timeline.update(focus=focus, marks=marks, highlight=highlight, culprit=culprit, lin=steps)


def _counterexample_result(checkers: dict[str, Any]) -> dict[str, Any]:
    """The result whose counterexample the timeline shows: linearizability's, else (when
    mutual exclusion found nothing to show first) the first invalid one with a
    counterexample, the owner-aware mutex's; {} for none."""
    lin = checkers.get("linearizability")
    if lin:
        return dict(lin)
    if (checkers.get("mutex") or {}).get("valid") is False:
        return {}  # the stale write or the two holders come first
    for r in checkers.values():
        if r.get("valid") is False and isinstance(r.get("counterexample"), dict):
            return dict(r)
    return {}


def _named_mark(
    a: dict[str, Any], positions: dict[Any, int]
) -> tuple[dict[str, Any], list[int]] | None:
    """A mark over a named anomaly's operations (from the first invoked to the last
    completed) and their positions on the timeline; None when it names no operation."""
    involved = [x for x in a.get("involved") or () if x.get("index") in positions]
    if not involved:
        return None
    s = min(us(x["invoke_time"]) for x in involved)
    e = max(us(x.get("complete_time") or x["invoke_time"]) for x in involved)
    where = f" (key {a['key']})" if a.get("key") is not None else ""
    mark = {"lane": -1, "s": s, "e": e, "label": f"{a.get('label', '')}{where}", "kind": "window"}
    return mark, [positions[x["index"]] for x in involved]


def _counterexample_ops(cx: dict[str, Any]) -> list[dict[str, Any]]:
    """The window's operations and the tail of the longest partial linearization: the
    context a reader needs to follow the explanation (which write, read before)."""
    ops = list((cx.get("window") or {}).get("ops", ()))
    lins = cx.get("linearizations") or []
    if lins:
        ops += lins[0].get("tail") or []
    return [o for o in ops if isinstance(o, dict) and "index" in o]


def _handover_marks(handovers: Any, lanes: Lanes) -> list[dict[str, Any]]:
    out = []
    for h in handovers:
        expiry = h.get("lease_expiry")
        if expiry is None:
            continue
        danger, last = h.get("danger_window_s"), h.get("last_write_arrival")
        lane = lanes.of(h["process"])
        if danger and last is not None:
            out.append(
                {
                    "lane": lane,
                    "s": us(expiry),
                    "e": us(last),
                    "kind": "danger",
                    "label": f"lease expired → danger window {danger:.3f} s → last write",
                }
            )
        else:
            out.append(
                {
                    "lane": lane,
                    "s": us(expiry),
                    "e": us(expiry),
                    "label": "lease expired",
                    "kind": "expiry",
                }
            )
        delay, nxt = h.get("handover_delay_s"), h.get("next_acquired")
        if delay is not None and nxt is not None and h.get("next_process") is not None:
            s, e = sorted((us(expiry), us(nxt)))
            out.append(
                {
                    "lane": lanes.of(h["next_process"]),
                    "s": s,
                    "e": e,
                    "label": f"handover delay {delay:.3f} s",
                    "kind": "handover",
                }
            )
    return out


def _mutex_focus(
    mutex: dict[str, Any], timeline: dict[str, Any], lanes: Lanes
) -> dict[str, Any] | None:
    """The first accepted stale write, else two holders under a valid lease, else the
    first stale write fencing rejected: from the writer's acquisition to the write."""
    stale = mutex.get("stale_accepted") or []
    if stale:
        return _stale_focus(stale[0], timeline, lanes, "the first accepted stale write")
    for o in mutex.get("overlaps") or ():
        if o.get("kind") == "lease-valid":
            later, first = o["later"], o["first"]
            end = first.get("until") or later.get("until") or later["acquired"]
            return _padded(us(first["acquired"]), us(end), "the two holders")
    rejected = mutex.get("stale_rejected") or []
    if rejected:
        return _stale_focus(rejected[0], timeline, lanes, "the stale write fencing rejected")
    return None


def _stale_focus(
    stale: dict[str, Any], timeline: dict[str, Any], lanes: Lanes, label: str
) -> dict[str, Any] | None:
    w = stale.get("write") or {}
    t = w.get("time")
    if not isinstance(t, int):
        return None
    writer = w.get("writer")
    start = None
    if writer is not None:
        start = _holding_start(timeline["holds"], lanes.of(writer), w.get("token"))
    expiry = stale.get("lease_expiry")
    s = min(x for x in (start, us(expiry) if expiry else None, us(t)) if x is not None)
    return _padded(s, us(t), label)


def _holding_start(holds: dict[str, list[Any]], lane: int, token: Any) -> int | None:
    """The start of the last holding on ``lane`` with ``token``."""
    found = None
    for i, t in enumerate(holds["token"]):
        if holds["lane"][i] == lane and t == token:
            found = holds["s"][i]
    return found


def _padded(s: int, e: int, label: str) -> dict[str, Any]:
    span = max(e - s, _MIN_SPAN_US)
    pad = int(span * _PAD)
    return {"s": s - pad, "e": s + span + pad, "label": label}
