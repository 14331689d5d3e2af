"""The unique-ids workload's section of a run's report (``Workload.sections``): the ids
against time, duplicates marked.

A plain SVG drawn here (no script needed): every id a client was handed at the time its op
completed, the fault windows shaded, each duplicate a red ring on every one of its issues
(each kind thinned evenly to ``POINTS``); under it the first duplicates with both
issuers (the checker's sentences are in the banner, not said again). The ids are read as
the checker read them (``checkers.ids.issued_ids``), and the duplicates are the
checker's, so picture and verdict agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from checkers.ids import NAME, Issued, duplicates, issued_ids
from checkers.windows import FaultWindow
from core.html import esc, table, tag
from workloads.section import RunView

POINTS: Final = 3000
WIDTH, HEIGHT, PAD = 900, 300, 40
OK_COLOUR, DUP_COLOUR, FAULT_COLOUR = "#3f9d57", "#c0392b", "rgba(230,80,60,0.18)"


def section(run: RunView) -> str:
    """The section, or nothing when the run has no ids checker's result or its history is
    malformed (no time line to draw on)."""
    found, windows = run.checker(NAME), run.windows
    if found is None or windows is None:
        return ""
    ids, _, _ = issued_ids(run.record.history)
    dup_ids = set(duplicates(ids))
    body = _plot(ids, dup_ids, windows) if ids else tag("p", "No id was handed out.")
    rows = [_row(d) for d in found.get("duplicates") or ()]
    if rows:
        shown = len(rows)
        total = found.get("duplicate_ids", shown)
        body += tag("h3", esc(f"Duplicates ({shown} of {total} shown)"))
        body += table(("id", "issued to", "during"), rows, class_="ids-duplicates")
    return tag("h2", "Ids against time") + tag("section", body, id="ids")


def _row(d: dict[str, Any]) -> list[str]:
    issuers = "<br>".join(
        esc(
            f"process {i['process']}"
            + (f" via {i['node']}" if i.get("node") else "")
            + f", op {i['invoked_s']} s to {i['completed_s']} s"
        )
        for i in d.get("issuers") or ()
    )
    return [esc(d.get("id")), issuers, esc("; ".join(d.get("during") or ()) or "no fault")]


def _thin(ids: Sequence[Issued]) -> Sequence[Issued]:
    return ids[:: max(1, len(ids) // POINTS)]


def _plot(ids: Sequence[Issued], dup_ids: set[int], windows: Sequence[FaultWindow]) -> str:
    t0 = 0
    t1 = max(max(i.done for i in ids), max((w.end or 0 for w in windows), default=0)) or 1
    lo, hi = min(i.id for i in ids), max(i.id for i in ids)
    span = (hi - lo) or 1

    def x(t: int) -> float:
        return round(PAD + (t - t0) / (t1 - t0) * (WIDTH - 2 * PAD), 1)

    def y(v: int) -> float:
        return round(HEIGHT - PAD - (v - lo) / span * (HEIGHT - 2 * PAD), 1)

    shades = "".join(
        tag(
            "rect",
            tag("title", esc(w.describe())),
            x=x(w.start),
            y=PAD,
            width=max(1.0, x(w.end if w.end is not None else t1) - x(w.start)),
            height=HEIGHT - 2 * PAD,
            fill=FAULT_COLOUR,
        )
        for w in windows
        if w.ok
    )
    dots = "".join(
        f'<circle cx="{x(i.done)}" cy="{y(i.id)}" r="1.5" fill="{OK_COLOUR}"/>'
        for i in _thin([i for i in ids if i.id not in dup_ids])
    )
    rings = "".join(
        tag(
            "circle",
            tag("title", esc(f"id {i.id} to process {i.process} at {i.done / 1e9:.3f} s")),
            cx=x(i.done),
            cy=y(i.id),
            r=4,
            fill="none",
            stroke=DUP_COLOUR,
            stroke_width=1.5,
            class_="duplicate",
        )
        for i in _thin([i for i in ids if i.id in dup_ids])
    )
    axes = (
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#888"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>'
        + tag("text", "0 s", x=PAD, y=HEIGHT - PAD / 3, font_size=11)
        + tag("text", f"{t1 / 1e9:.1f} s", x=WIDTH - PAD, y=HEIGHT - PAD / 3, font_size=11)
        + tag("text", esc(f"id {hi}"), x=2, y=PAD - 8, font_size=11)
        + tag("text", esc(f"id {lo}"), x=2, y=HEIGHT - PAD + 14, font_size=11)
    )
    return tag(
        "svg",
        shades + axes + dots + rings,
        viewBox=f"0 0 {WIDTH} {HEIGHT}",
        width="100%",
        role="img",
        aria_label="ids against the time their op completed; duplicates ringed in red",
        id="ids-plot",
    )
