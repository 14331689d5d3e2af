"""The registry workload's section of a run's report (``Workload.sections``), its
membership: each instance's true state against what each discovery client saw, drawn as one
inline SVG (no script), then the measured numbers (detection per death and client,
recovery, removals of live instances with their cause, stale listings).

It reads the membership timeline as the checker does (``checkers.membership``) and the
checker's numbers from ``results.json`` (its ``discovery`` entry), so the picture and the
verdict agree. A run without that entry gets no section.
"""

from __future__ import annotations

import math
from typing import Any, Final

from checkers.discovery import NAME
from checkers.membership import Timeline, timeline
from core.html import esc, table, tag
from core.short_text import DASH, seconds, secs
from workloads.section import RunView

WIDTH: Final = 960
LABEL: Final = 150
ROW: Final = 14
AXIS: Final = 18
"""The height of the time axis along the top, as the report's other timelines have it."""
TICK_SPACING: Final = 110
"""Pixels between ticks at least, as the canvas timelines space theirs (view.js)."""
ALIVE, DEAD, LISTED, ABSENT = "#3f9d57", "#d9534f", "#5b8def", "#e3e6ea"


def section(run: RunView) -> str:
    """The section, or "" when the run has no discovery verdict."""
    found = run.checker(NAME)
    if found is None or "deaths" not in found:
        return ""
    t = timeline(run.record)
    if not t.process_of or not t.listings:
        return ""
    return tag(
        "section",
        tag("h2", "Membership: true state against each discovery client")
        + _svg(t)
        + tag(
            "p",
            esc(
                "Each instance: green while its process ran, red while frozen or killed; "
                "under it, one row per discovery client: blue while that client listed it. "
                "The dashed line is the death plus TTL plus the service's grace."
            ),
            class_="context",
        )
        + _deaths(found)
        + _removals(found),
        id="membership",
    )


def _svg(t: Timeline) -> str:
    t0 = min(x.invoke for x in t.listings)
    span = max(1, t.end - t0)

    def x(ns: int) -> float:
        return LABEL + (WIDTH - LABEL - 10) * (max(ns, t0) - t0) / span

    rows: list[str] = []
    clients = t.discoverers()
    y = AXIS
    for member in sorted(t.process_of, key=_order):
        first = min(t.registered[member])
        deaths = [d for d in t.deaths if d.member == member]
        rows.append(_label(y, f"{member} (process {t.process_of[member]})"))
        rows.append(_bar(x(first), x(t.end), y, ALIVE))
        for d in deaths:
            rows.append(_bar(x(d.start), x(d.end or t.end), y, DEAD, d.words))
            if t.deadline_s is not None:
                at = x(d.start + int(t.deadline_s * 1e9))
                rows.append(
                    f'<line x1="{at:.1f}" x2="{at:.1f}" y1="{y}" '
                    f'y2="{y + ROW * (len(clients) + 1)}" stroke="#333" stroke-dasharray="3,2"/>'
                )
        y += ROW
        for c in clients:
            rows.append(_label(y, f"  seen by {c}"))
            rows += _seen(t, member, c, x, y)
            y += ROW
        y += ROW // 2
    return tag(
        "svg",
        _axis(t0, t.end, x, y) + "".join(rows),
        width=WIDTH,
        height=y,
        viewBox=f"0 0 {WIDTH} {y}",
        role="img",
        class_="membership",
    )


def ticks(t0: int, t1: int, most: int) -> tuple[list[int], int]:
    """Tick times (ns on the run clock) from ``t0`` to ``t1``, at most about ``most``: the
    multiples of a step of 1, 2 or 5 times a power of ten; and that step."""
    raw = max(1, t1 - t0) / max(1, most)
    power = 10 ** math.floor(math.log10(raw))
    step = max(1, round(next(m * power for m in (1, 2, 5, 10) if m * power >= raw)))
    first = -(-t0 // step) * step
    return list(range(first, t1 + 1, step)), step


def tick_label(ns: int, step: int) -> str:
    """A tick's time in seconds with as many decimals as its step needs (``HR.fmtTime``
    of the canvas timelines: ``4.0 s``, ``4.25 s``)."""
    digits = max(0, min(6, math.ceil(-math.log10(step / 1e9)) + 1))
    return f"{ns / 1e9:.{digits}f} s"


def _axis(t0: int, t1: int, x: Any, height: int) -> str:
    """The time axis along the top: each tick's time in seconds on the run clock, and a
    faint line down through the rows."""
    marks, step = ticks(t0, t1, (WIDTH - LABEL) // TICK_SPACING)
    out = [_label(0, "time (run clock)")]
    for ns in marks:
        at = x(ns)
        out.append(
            f'<line x1="{at:.1f}" x2="{at:.1f}" y1="{AXIS - 4}" y2="{height}" stroke="#e6e6e6"/>'
            f'<text x="{at:.1f}" y="{AXIS - 6}" font-size="11" text-anchor="middle" '
            f'fill="#555">{esc(tick_label(ns, step))}</text>'
        )
    return tag("g", "".join(out), class_="axis")


def _order(member: str) -> tuple[int, str]:
    digits = member.lstrip("i")
    return (int(digits), member) if digits.isdigit() else (1 << 30, member)


def _seen(t: Timeline, member: str, client: Any, x: Any, y: int) -> list[str]:
    """Runs of one client's listings in which ``member`` was present or absent."""
    mine = [lst for lst in t.listings if lst.process == client]
    out: list[str] = []
    start, state = None, None
    for i, lst in enumerate(mine):
        here = member in lst.members
        if here != state:
            if state is not None and start is not None:
                out.append(_bar(x(start), x(lst.invoke), y, LISTED if state else ABSENT))
            start, state = lst.invoke, here
        if i == len(mine) - 1 and start is not None:
            out.append(_bar(x(start), x(lst.time), y, LISTED if state else ABSENT))
    return out


def _bar(x0: float, x1: float, y: int, colour: str, title: str = "") -> str:
    inner = tag("title", esc(title)) if title else ""
    return (
        f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(1.0, x1 - x0):.1f}" height="{ROW - 4}" '
        f'fill="{colour}">{inner}</rect>'
    )


def _label(y: int, text: str) -> str:
    return f'<text x="2" y="{y + ROW - 3}" font-size="11">{esc(text)}</text>'


def _deaths(found: dict[str, Any]) -> str:
    rows = []
    for d in found["deaths"]:
        per = ", ".join(f"{c}: {s:.3f} s" for c, s in d.get("per_client_s", {}).items())
        rows.append(
            [
                esc(d["member"]),
                esc(d["words"]),
                esc(secs(d["detection_s"]) if d["expected_removal"] else "not due"),
                esc(per or DASH),
                esc(secs(d.get("reregistered_s"))),
                esc(secs(d.get("relisted_s"))),
                esc((d.get("violation") or {}).get("sentence", "")),
            ]
        )
    if not rows:
        return tag("p", "No instance died.")
    head = ("member", "death", "detection", "per client", "re-registered", "listed again", "")
    return table(head, rows)


def _removals(found: dict[str, Any]) -> str:
    parts = []
    removals = found.get("live_removals") or []
    if removals:
        rows = [
            [
                esc(r["member"]),
                esc(f"{seconds(r['from'])} to {seconds(r['to'])}"),
                esc(", ".join(r["clients"])),
                esc(r.get("kind", "")),
                esc(r["cause"]),
            ]
            for r in removals
        ]
        parts.append(tag("h3", "Running instances not listed"))
        parts.append(table(("member", "when", "clients", "kind", "cause"), rows))
    stale = found.get("stale_listings") or []
    if stale:
        rows = [
            [esc(s["member"]), esc(s["process"]), esc(s["node"]), esc(seconds(s["at"]))]
            for s in stale
        ]
        parts.append(tag("h3", "Stale listings (a dead member another client saw removed)"))
        parts.append(table(("member", "client", "node", "asked at"), rows))
    return "".join(parts)
