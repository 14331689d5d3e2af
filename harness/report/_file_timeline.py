"""The timeline of a history file: the run report's, drawn per key, in the file's time.

A history file is drawn as a run's history is (``_timeline.build_timeline``, annotated by
``_anomaly.annotate`` with the counterexample and the longest partial linearizations),
with two differences porcupine's visualization has too:

- per key: a file of several keys gets one group of lanes per key, in each one lane per
  client that touched it (``key 7 · p3``); the counterexample's key comes first, so the
  report opens on its lanes;
- in the file's time: files that record only the order of events (Knossos, porcupine:
  an op's time is its position) are drawn one event per tick of the timeline (``unit``
  ``event``; the page's ``events.js`` says "event 12" where a run's says seconds). Their
  counterexample's times, in events, are put in the same ticks for the drawing only; its
  tables keep saying events.
"""

from __future__ import annotations

from typing import Any, Final

from checkers.record import RunRecord
from core.history import History
from harness.report._anomaly import annotate
from harness.report._timeline import build_timeline, key_text

TICK_NS: Final = 1000
"""An event position drawn as one tick: the timeline's integer microsecond."""
_TIMES: Final = frozenset(("invoke_time", "complete_time", "start", "end"))
_STEP_TIMES: Final = "at"
_KEY_CHARS: Final = 12


def positional(history: History) -> bool:
    """Whether the history records only the order of its events (time = position)."""
    return all(op.time == op.index for op in history)


def file_timeline(history: History, results: dict[str, Any]) -> dict[str, Any]:
    """The timeline data of a checked history file (``results``: a run's results dict
    holding the file's linearizability result); MalformedHistory where its ops do not
    pair."""
    events = positional(history)
    if events:
        history = History(op.with_(time=op.time * TICK_NS) for op in history)
        results = in_ticks(results)
    timeline, lanes = build_timeline(RunRecord(history), results, ())
    annotate(results, timeline, lanes)
    timeline["fencing"] = None
    timeline["unit"] = "event" if events else "us"
    cx = results["checkers"].get("linearizability", {}).get("counterexample") or {}
    lanes_by_key(timeline, cx.get("partition"))
    return timeline


def in_ticks(value: Any) -> Any:
    """A copy of a result (dicts and lists) with its times in events (an op's
    ``invoke_time`` and ``complete_time``, a window's ``start`` and ``end``, the steps'
    ``at``) put in ticks, and its ``time_unit`` said in them."""
    if isinstance(value, list):
        return [in_ticks(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        if k in _TIMES:
            out[k] = _tick(v)
        elif k == _STEP_TIMES and isinstance(v, list):
            out[k] = [_tick(t) for t in v]
        elif k == "time_unit":
            out[k] = "ns"
        else:
            out[k] = in_ticks(v)
    return out


def _tick(t: Any) -> Any:
    return t * TICK_NS if type(t) is int else t


def lanes_by_key(timeline: dict[str, Any], first: Any = None) -> None:
    """Give each key its own group of lanes, one per client lane that has an op on it,
    the group of the key ``first`` (the counterexample's) first, then in the order the
    keys first appear; ops without a key keep their client's lane, in a group of their
    own. The nemesis lane stays on top. Nothing changes for a history of one key or none.
    """
    ops, keys, old = timeline["ops"], timeline["keys"], timeline["lanes"]
    if len(keys) < 2:
        return
    head = key_text(first) if first is not None else None
    order = [*sorted(range(len(keys)), key=lambda k: keys[k] != head), -1]  # sort is stable
    used: dict[int, set[int]] = {}  # per key, the client lanes with an op on it
    for k, lane in zip(ops["k"], ops["lane"], strict=True):
        used.setdefault(k, set()).add(lane)
    lane_of: dict[tuple[int, int], int] = {(k, 0): 0 for k in used}  # the nemesis lane
    new: list[dict[str, Any]] = [old[0]]
    first_of: dict[int, int] = {0: 0}  # a client lane's first new lane, for holds and such
    for k in order:
        for lane in sorted(used.get(k, set()) - {0}):
            lane_of[(k, lane)] = len(new)
            first_of.setdefault(lane, len(new))
            label = old[lane]["label"] if k < 0 else f"{_short(keys[k])} · {old[lane]['label']}"
            after = lane_of.get((k, old[lane]["after"]), -1)
            new.append({**old[lane], "label": label, "after": after})
    ops["lane"] = [lane_of[(k, lane)] for k, lane in zip(ops["k"], ops["lane"], strict=True)]
    for name in ("holds", "leases", "sessions"):
        timeline[name]["lane"] = [first_of.get(lane, lane) for lane in timeline[name]["lane"]]
    timeline["lanes"] = new


def _short(key: str) -> str:
    text = f"key {key}"
    return text if len(text) <= _KEY_CHARS else text[: _KEY_CHARS - 1] + "…"
