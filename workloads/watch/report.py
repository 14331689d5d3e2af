"""The watch workload's section of a run's report (``Workload.sections``): each watcher's
deliveries, and over time against the writes.

From the watch checkers' results (``checkers.watch_delivery``, ``checkers.watch_latency``)
and the history's writes: a table per watcher process (its mechanism, changes delivered,
missed, compacted away, duplicates, out of order, compactions handled, final values,
latency) and an inline SVG of changes per second, the writes' line and one line per
watcher, so a watcher that fell behind, stopped or coalesced shows as a line under the
writes'. Empty for a run without watch results.
"""

from __future__ import annotations

from typing import Any

from checkers import watch_delivery, watch_latency
from core.html import esc, table, tag
from workloads.section import RunView

_W, _H, _PAD = 720, 160, 28
_COLORS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f", "#c53030")


def _per_second(times: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for t in times:
        out[t // 1_000_000_000] = out.get(t // 1_000_000_000, 0) + 1
    return out


def _line(series: dict[int, int], x0: int, x1: int, top: int, color: str, name: str) -> str:
    span = max(1, x1 - x0)
    points = " ".join(
        f"{_PAD + (s - x0) * (_W - 2 * _PAD) / span:.1f},"
        f"{_H - _PAD - series.get(s, 0) * (_H - 2 * _PAD) / max(1, top):.1f}"
        for s in range(x0, x1 + 1)
    )
    return tag(
        "polyline", tag("title", esc(name)), points=points, fill="none", stroke=color,
        stroke_width="1.5",
    )  # fmt: skip


def _chart(writes: dict[int, int], watchers: dict[str, dict[int, int]]) -> str:
    """Changes per second: the writes (grey) and each watcher's deliveries."""
    every = [writes, *watchers.values()]
    seconds = [s for series in every for s in series]
    if not seconds:
        return ""
    x0, x1 = min(seconds), max(seconds)
    top = max(v for series in every for v in series.values())
    lines = _line(writes, x0, x1, top, "#a0aec0", "committed writes per second")
    legend = [tag("span", esc("writes"), style="color:#718096")]
    for i, (process, series) in enumerate(sorted(watchers.items())):
        color = _COLORS[i % len(_COLORS)]
        lines += _line(series, x0, x1, top, color, f"watcher {process}")
        legend.append(tag("span", esc(f"watcher {process}"), style=f"color:{color}"))
    axis = tag("text", esc(f"{top}/s"), x="2", y=str(_PAD), font_size="10") + tag(
        "text", esc(f"{x0} s … {x1} s"), x=str(_PAD), y=str(_H - 8), font_size="10"
    )
    svg = tag(
        "svg", axis + lines, viewBox=f"0 0 {_W} {_H}", width=str(_W), height=str(_H),
        role="img", aria_label="changes per second: writes and each watcher's deliveries",
    )  # fmt: skip
    return tag("figure", svg + tag("figcaption", " · ".join(legend)), class_="watch-chart")


def _row(w: dict[str, Any], latency: dict[str, Any]) -> list[str]:
    lat = latency.get(str(w["process"]), {})
    final = (
        "not judged" if not w.get("settled") else "stale" if w.get("stale_final") else "last write"
    )
    cells = [
        w["process"], w.get("mechanism", ""), w.get("delivered", 0), w.get("missed", 0),
        w.get("excused", 0), w.get("duplicates", 0), w.get("out_of_order", 0),
        f"{w.get('handled', 0)}/{w.get('compactions', 0)}", final,
        f"{lat['p50']} / {lat['p99']}" if "p50" in lat else "-",
    ]  # fmt: skip
    return [esc(c) for c in cells]


def section(run: RunView) -> str:
    """The section, or "" when the run has no watch results."""
    delivery, latency = (
        run.checker(watch_delivery.NAME),
        run.checker(watch_latency.NAME) or {},
    )
    if delivery is None or not delivery.get("watchers"):
        return ""
    per = latency.get("watchers") or {}
    rows = [_row(w, per) for w in delivery["watchers"]]
    headers = (
        "process", "mechanism", "delivered", "missed", "compacted away", "duplicates",
        "out of order", "compactions handled", "final values", "latency p50 / p99 (ms)",
    )  # fmt: skip
    history = run.record.history
    writes = [op.time for op in history if op.f == "write" and op.type == "ok" and op.is_client]
    watchers = {str(p): dict(v.get("per_second", [])) for p, v in per.items() if v.get("count")}
    return (
        tag("h2", "Watch delivery")
        + tag("p", esc(delivery.get("summary", "")))
        + table(headers, rows, id_="watchers")
        + _chart(_per_second(writes), watchers)
    )
