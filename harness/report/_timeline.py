"""The timeline's data: every operation, fault, lease, holding and write, as compact columns.

The page draws 100,000 operations, so the data is columnar (one array per field, strings
interned in tables) and times are integer microseconds on the run clock. An operation is
its invocation and completion: ``s`` and ``e`` (``-1``: never returned), its outcome ``t``
(see ``OUTCOMES``), its function ``f`` and key ``k`` (indexes into ``fs`` and ``keys``),
its value ``v`` (compact JSON, cut short), its history index ``x``, and indexes into
``strs`` for its error and node (``-1``: none).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from checkers.holdings import LOCK, Terms
from checkers.record import RunRecord
from checkers.windows import MOVES_CLOCK, FaultWindow
from core.history import Pair
from harness.report._lanes import Lanes
from harness.report._locks import (
    held,
    is_stale,
    lease_spans,
    stale_write_keys,
    terms_of,
    words,
)

OUTCOMES = ("ok", "fail", "info", "open")
_VALUE_CHARS = 100


class _Interner:
    """Strings to small integers, for columns of repeated strings."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, s: Any) -> int:
        if s is None:
            return -1
        key = str(s)
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(self.items)
            self.items.append(key)
        return i


def us(ns: int | None) -> int:
    """Nanoseconds to the timeline's integer microseconds (-1 for None)."""
    return -1 if ns is None else ns // 1000


_encode = json.JSONEncoder(separators=(",", ":"), default=str, ensure_ascii=False).encode


def compact(value: Any, limit: int = _VALUE_CHARS) -> str:
    """A short JSON text of a value, for labels and tooltips ("" for None)."""
    if value is None:
        return ""
    if type(value) is int:  # the common case, 100,000 times: skip the encoder
        return str(value)
    text = _encode(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def key_text(key: Any) -> str:
    """A key as a label shows it: ``2``, ``x``, ``[1,2]``."""
    return key if isinstance(key, str) else compact(key)


def build_timeline(
    record: RunRecord, results: dict[str, Any] | None, windows: Sequence[FaultWindow]
) -> tuple[dict[str, Any], Lanes]:
    """The timeline data of a run, and its lanes (to place annotations on)."""
    history = record.history
    concurrency = record.options.get("concurrency")
    lanes = Lanes(history.processes(), concurrency if isinstance(concurrency, int) else None)
    pairs = history.pairs()
    strs = _Interner()
    data: dict[str, Any] = {"unit": "us", "outcomes": list(OUTCOMES)}
    data["ops"], tables = _ops(pairs, lanes, strs)
    data.update(tables)
    mutex = (results or {}).get("checkers", {}).get("mutex")
    terms = terms_of(history, record.test)
    data["holds"], data["leases"] = _holds_and_leases(record, lanes, pairs, terms)
    data["words"] = words(terms or LOCK)
    data["writes"] = _writes(record.resource_log, lanes, strs, mutex)
    data["sessions"] = _session_events(record.events, lanes, strs)
    data["faults"] = [_fault(w, lanes) for w in windows]
    data["clock"] = _clock(windows, lanes)
    times = [t for t in (_first_time(record), _last_time(record)) if t is not None]
    data["t0"], data["t1"] = (us(min(times)), us(max(times))) if times else (0, 1)
    data["lanes"] = lanes.to_list()
    data["strs"] = strs.items
    return data, lanes


def _ops(
    pairs: list[Pair], lanes: Lanes, strs: _Interner
) -> tuple[dict[str, list[Any]], dict[str, list[str]]]:
    """The operation columns, and the tables of functions, keys and processes."""
    fs, keys, procs = _Interner(), _Interner(), _Interner()
    cols: dict[str, list[Any]] = {
        c: [] for c in ("lane", "s", "e", "t", "f", "k", "v", "x", "p", "err", "node")
    }
    outcome = {name: i for i, name in enumerate(OUTCOMES)}
    for pair in pairs:
        inv, comp = pair.invoke, pair.completion
        cols["lane"].append(lanes.of(inv.process))
        cols["s"].append(us(inv.time))
        cols["e"].append(us(comp.time) if comp is not None else -1)
        cols["t"].append(outcome[comp.type] if comp is not None else outcome["open"])
        cols["f"].append(fs(inv.f))
        cols["k"].append(keys(key_text(inv.key)) if inv.key is not None else -1)
        cols["v"].append(compact(pair.value))
        cols["x"].append(inv.index)
        cols["p"].append(procs(inv.process))
        cols["err"].append(strs(comp.error if comp is not None else None))
        cols["node"].append(strs((comp.node if comp is not None else None) or inv.node))
    return cols, {"fs": fs.items, "keys": keys.items, "procs": procs.items}


def _holds_and_leases(
    record: RunRecord, lanes: Lanes, pairs: list[Pair], terms: Terms | None
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The holding lanes of ``terms``' operations (None: none) and the lease lanes."""
    holds: dict[str, list[Any]] = {"lane": [], "s": [], "e": [], "token": [], "ended": []}
    ls: dict[str, list[Any]] = {"lane": [], "s": [], "ack": [], "e": [], "lost": [], "id": []}
    takes = terms.take if terms is not None else ()
    if not record.events and not any(p.invoke.f in takes for p in pairs):
        return holds, ls  # no lock, no lease: a register run
    taken, facts = held(record.history, record.events, record.service_events, terms)
    for h in taken:
        holds["lane"].append(lanes.of(h.process))
        holds["s"].append(us(h.start))
        holds["e"].append(us(h.end))
        holds["token"].append(h.number)
        holds["ended"].append(h.ended_by)
    for span in lease_spans(taken, facts):
        ls["lane"].append(lanes.of(span.process))
        ls["s"].append(us(span.granted))
        ls["ack"].append(us(span.sure_until))
        ls["e"].append(us(span.maybe_until))
        ls["lost"].append(us(span.lost_at))
        ls["id"].append(str(span.lease))
    return holds, ls


def _session_event_words(e: dict[str, Any]) -> str | None:
    """What a client event says, for the timeline; None for routine ones (grants,
    renewals, releases: the holding and lease bars already show them)."""
    kind = e.get("event")
    if kind == "keepalive-failed":
        return f"renewal failed: {e.get('error', 'no answer')}"
    if kind == "session-state":
        moved = f" to {e['server']} (was {e['was']})" if e.get("server") and e.get("was") else ""
        return f"session {e.get('state')}{moved}"
    if kind == "late-completion":
        err = f" ({e['error']})" if e.get("error") else ""
        return f"late completion of an abandoned {e.get('f')}: {e.get('type')}{err}"
    if kind == "worker-stopped":
        return "abandoned worker stopped"
    if kind == "lease-ended" and e.get("reason") not in (None, "released", "not granted"):
        return f"lease let go: {e.get('reason')}"
    return None


def _session_events(
    events: Sequence[dict[str, Any]], lanes: Lanes, strs: _Interner
) -> dict[str, list[Any]]:
    """What the clients and the runner saw of sessions and abandoned workers, as marks on
    the client lanes: failed renewals, connection states, late completions, stops."""
    cols: dict[str, list[Any]] = {"lane": [], "s": [], "what": []}
    for e in events:
        words = _session_event_words(e)
        if words is None or not isinstance(e.get("time"), int) or e.get("process") is None:
            continue
        cols["lane"].append(lanes.of(e["process"]))
        cols["s"].append(us(int(e["time"])))
        cols["what"].append(strs(words))
    return cols


def _writes(
    log: list[dict[str, Any]], lanes: Lanes, strs: _Interner, mutex: dict[str, Any] | None
) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {
        c: [] for c in ("s", "lane", "writer", "proc", "token", "hb", "acc", "stale", "res")
    }
    flagged = stale_write_keys(mutex)
    resource_lane = lanes.add("resource", "resource") if log else -1
    for w in sorted(log, key=lambda w: int(w.get("time", 0))):
        cols["s"].append(us(int(w.get("time", 0))))
        cols["lane"].append(resource_lane)
        cols["writer"].append(lanes.of(w["writer"]) if w.get("writer") is not None else -1)
        cols["proc"].append(w.get("writer"))  # the process, as the resource logged it
        cols["token"].append(w.get("token"))
        cols["hb"].append(w.get("highest_before"))
        cols["acc"].append(1 if w.get("accepted") else 0)
        cols["stale"].append(1 if is_stale(w, flagged) else 0)
        cols["res"].append(strs(w.get("resource")))
    return cols


def _fault(w: FaultWindow, lanes: Lanes) -> dict[str, Any]:
    return {
        "name": w.kind,
        "s": us(w.start),
        "e": us(w.end),
        "ok": w.ok,
        "lanes": sorted({lanes.of(p) for p in w.processes}),
        "detail": w.describe(),
    }


def _clock(windows: Sequence[FaultWindow], lanes: Lanes) -> list[dict[str, Any]]:
    """Clock offsets, one lane per node: each clock fault's offsets from its start, and
    back to 0 at its end."""
    lane_of: dict[str, int] = {}
    out = []
    for w in windows:
        if MOVES_CLOCK not in w.effects or not w.ok:
            continue
        for node, offset in w.offsets:
            if node not in lane_of:
                lane_of[node] = lanes.add(f"clock {node}", "clock")
            out.append({"lane": lane_of[node], "s": us(w.start), "offset": offset})
            if w.end is not None:
                out.append({"lane": lane_of[node], "s": us(w.end), "offset": 0.0})
    return sorted(out, key=lambda o: o["s"])


def _first_time(record: RunRecord) -> int | None:
    times = [record.history[0].time] if len(record.history) else []
    times += [int(e["time"]) for e in record.events[:1] if isinstance(e.get("time"), int)]
    return min(times, default=None)


def _last_time(record: RunRecord) -> int | None:
    times = [record.history[-1].time] if len(record.history) else []
    times += [int(e["time"]) for e in record.events[-1:] if isinstance(e.get("time"), int)]
    times += [int(w["time"]) for w in record.resource_log if isinstance(w.get("time"), int)]
    return max(times, default=None)
