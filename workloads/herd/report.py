"""The herd workload in reports (``Workload.sections``, ``Workload.across``): one run's
numbers, and across runs notifications per handoff against the number of waiters, one line
per target and recipe, with a table per target.

A run's numbers come from its ``herd`` checker result (``checkers.herd``); runs of other
workloads have none and are left out. ``harness compare`` prints the tables under its
matrix and draws the plot on its page; ``scripts/herd_sweep.py`` prints the tables of
its sweep and writes its page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from checkers.herd import NAME
from core.html import definitions, esc, table, tag
from core.short_text import DASH
from workloads.section import Across, Measured, RunView

COLUMNS = (
    "waiters",
    "recipe",
    "handoffs",
    "notifications / handoff",
    "failed attempts / handoff",
    "requests / handoff",
    "requests / s",
    "handoff latency p50",
    "verdict",
)
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
_DASHES = {"naive": "", "queue": "6 4"}


@dataclass(frozen=True, slots=True)
class HerdPoint:
    """One herd run: its target, recipe, waiters and numbers (``checkers.herd`` details)."""

    target: str
    recipe: str
    waiters: int
    details: dict[str, Any]
    verdict: str

    def number(self, key: str) -> float | None:
        value = self.details.get(key)
        return float(value) if isinstance(value, int | float) else None

    def row(self) -> list[str]:
        """The table row of ``COLUMNS``, as text."""
        latency = self.details.get("handoff_latency_s") or {}
        p50 = latency.get("p50") if isinstance(latency, dict) else None
        return [
            str(self.waiters),
            self.recipe,
            str(self.details.get("handoffs", DASH)),
            _fmt(self.number("notifications_per_handoff"), 2),
            _fmt(self.number("failed_attempts_per_handoff"), 2),
            _fmt(self.number("requests_per_handoff"), 1),
            _fmt(self.number("requests_per_s"), 0),
            DASH if not isinstance(p50, int | float) else f"{p50 * 1000:.0f} ms",
            self.verdict,
        ]


def _fmt(x: float | None, digits: int) -> str:
    return DASH if x is None else f"{x:.{digits}f}"


def herd_point(run: Measured) -> HerdPoint | None:
    """The herd numbers of a run, None for a run without them."""
    return _point(run.checkers.get(NAME), run.target, run.verdict)


def _point(details: Any, target: str = "", verdict: str = "") -> HerdPoint | None:
    """The point of a herd checker's ``details``, None unless they measured waiters."""
    if not isinstance(details, dict) or not isinstance(details.get("waiters"), int):
        return None
    recipe = str(details.get("recipe", "?"))
    return HerdPoint(target, recipe, int(details["waiters"]), details, verdict)


def herd_points(runs: Iterable[Measured]) -> list[HerdPoint]:
    """The herd runs among ``runs``, by target, recipe and waiters."""
    points = [p for p in map(herd_point, runs) if p is not None]
    return sorted(points, key=lambda p: (p.target, p.recipe, p.waiters))


def by_target(points: Sequence[HerdPoint]) -> dict[str, list[HerdPoint]]:
    out: dict[str, list[HerdPoint]] = {}
    for p in points:
        out.setdefault(p.target, []).append(p)
    return out


def markdown_tables(points: Sequence[HerdPoint]) -> str:
    """A Markdown table per target (README, the sweep's output)."""
    parts = []
    for target, rows in by_target(points).items():
        lines = [f"{target}:", "", "| " + " | ".join(COLUMNS) + " |"]
        lines.append("|" + " --- |" * len(COLUMNS))
        lines += ["| " + " | ".join(p.row()) + " |" for p in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def plot_svg(points: Sequence[HerdPoint], width: int = 640, height: int = 360) -> str:
    """Notifications per handoff against waiters: a line per target and recipe (solid
    naive, dashed queue), as an SVG element."""
    lines: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for p in points:
        y = p.number("notifications_per_handoff")
        if y is not None:
            lines.setdefault((p.target, p.recipe), []).append((p.waiters, y))
    if not lines:
        return ""
    left, right, top, bottom = 56, 180, 32, 40
    max_x = max(x for xs in lines.values() for x, _ in xs)
    step = _tick_step(max(y for ys in lines.values() for _, y in ys))
    max_y = step * math.ceil(max(y for ys in lines.values() for _, y in ys) / step)

    def sx(x: float) -> float:
        return left + (width - left - right) * x / max_x

    def sy(y: float) -> float:
        return height - bottom - (height - top - bottom) * y / max_y

    out = [
        f'<line x1="{left}" y1="{sy(0)}" x2="{sx(max_x)}" y2="{sy(0)}" stroke="#444"/>',
        f'<line x1="{left}" y1="{sy(0)}" x2="{left}" y2="{sy(max_y)}" stroke="#444"/>',
    ]
    for x in sorted({x for xs in lines.values() for x, _ in xs}):
        out.append(_text(sx(x), sy(0) + 16, str(x), "middle"))
    for i in range(round(max_y / step) + 1):
        out.append(_text(left - 6, sy(i * step) + 4, f"{i * step:g}", "end"))
    out.append(_text((left + width - right) / 2, height - 6, "waiters (N)", "middle"))
    out.append(_text(8, 14, "notifications / handoff", "start"))
    colours = {t: _COLOURS[i % len(_COLOURS)] for i, t in enumerate(sorted({t for t, _ in lines}))}
    for i, ((target, recipe), xy) in enumerate(sorted(lines.items())):
        colour = colours[target]
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in sorted(xy))
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2" '
            f'stroke-dasharray="{_DASHES.get(recipe, "2 2")}"/>'
        )
        out += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>' for x, y in xy]
        out.append(_text(width - right + 34, top + 14 + 16 * i, f"{target} {recipe}", "start"))
        out.append(
            f'<line x1="{width - right + 14}" y1="{top + 10 + 16 * i}" x2="{width - right + 30}" '
            f'y2="{top + 10 + 16 * i}" stroke="{colour}" stroke-width="2" '
            f'stroke-dasharray="{_DASHES.get(recipe, "2 2")}"/>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" class="herd-plot" role="img" '
        f'aria-label="notifications per handoff against waiters">' + "".join(out) + "</svg>"
    )


def _tick_step(top: float) -> float:
    """A round step that divides 0..``top`` into at most 5 ticks."""
    return next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if top / s <= 5) if top > 0 else 1


def _text(x: float, y: float, text: str, anchor: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="12" '
        f'font-family="sans-serif">{esc(text)}</text>'
    )


def herd_html(points: Sequence[HerdPoint]) -> str:
    """The plot and a table per target, for a page over many runs ('' without any)."""
    if not points:
        return ""
    tables = "".join(
        tag("h3", esc(target)) + table(COLUMNS, [[esc(c) for c in p.row()] for p in rows])
        for target, rows in by_target(points).items()
    )
    return tag(
        "section",
        tag("h2", "Herd effect: notifications per handoff") + plot_svg(points) + tables,
        id="herd-effect",
    )


def section(run: RunView) -> str:
    """One herd run's numbers and each waiter's notifications ('' for other runs)."""
    p = _point(run.checker(NAME))
    if p is None:
        return ""
    items = list(zip(COLUMNS[2:-1], (esc(c) for c in p.row()[2:-1]), strict=True))
    items.append(("notifications per waiter", _per_process(p.details, "notifications")))
    sessions = p.details.get("session_events")
    if isinstance(sessions, int) and sessions:
        items.append(
            (
                "session events, apart",
                f"{sessions} watches fired by the waiters' own connections (a server lost, "
                f"a session moved or expired), not counted as notifications: "
                f"{_per_process(p.details, 'session_events')}",
            )
        )
    return tag("h2", f"Herd: {esc(p.recipe)} recipe, {p.waiters} waiters") + definitions(items)


def _per_process(details: dict[str, Any], name: str) -> str:
    """``process 0: 3, process 1: 4`` from ``details[name + "_by_process"]``, escaped."""
    per_process = details.get(f"{name}_by_process") or {}
    return esc(", ".join(f"process {k}: {v}" for k, v in per_process.items()) or DASH)


def _markdown(runs: Sequence[Measured]) -> str:
    return markdown_tables(herd_points(runs))


def _html(runs: Sequence[Measured]) -> str:
    return herd_html(herd_points(runs))


ACROSS = Across("Herd effect, per target", _markdown, _html)
"""The herd runs among many: their tables and the plot (``harness compare``, a sweep)."""
