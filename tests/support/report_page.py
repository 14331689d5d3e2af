"""What the browser tests read of a report page in headless Chromium: the page loaded and
judged (offline, no console error, its first view rendered), the colour of a pixel of its
timeline, and what it shows of the longest partial linearization."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.chromium import PageLoad, load_page


def load_report(path: Path, evaluate: dict[str, str] | None = None) -> PageLoad:
    """``path`` loaded in Chromium and judged: no console error, no request but the
    page itself, its first view rendered, a screenshot taken."""
    page = load_page(path.resolve().as_uri(), evaluate=evaluate, screenshot=True)
    assert page.errors == [], f"console errors: {page.errors}"
    assert page.requests == [path.resolve().as_uri()], "the page fetched something"
    assert page.rendered == "1", "the first view was not marked rendered"
    assert page.screenshot and page.screenshot.startswith(b"\x89PNG")
    return page


# The colour (r, g, b) of the timeline canvas at CSS pixel (x, y), after drawing it.
PIXEL = """const pixel = (x, y) => {
  const r = HR.report, c = r.timeline.canvas, dpr = window.devicePixelRatio || 1;
  r.view.draw();
  const px = c.getContext("2d").getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1);
  return Array.from(px.data).slice(0, 3);
};"""

# The last point of the drawn linearization (inside the first view): its pixel, and the
# tooltip of hovering it; the select of linearizations and the side table's rows.
LINEARIZATION = (
    """(() => {
  """
    + PIXEL
    + """
  const r = HR.report, tl = r.timeline, c = tl.canvas, v = r.view, lz = tl.linearization;
  const l = lz.current(), w = c.clientWidth, box = c.getBoundingClientRect();
  const j = l.at.length - 1, x = v.x(l.at[j], w), y = lz.y(l.pos[j]);
  const colour = pixel(x, y);
  const at = {clientX: box.left + x, clientY: box.top + y, bubbles: true};
  c.dispatchEvent(new MouseEvent("mousemove", at));
  const tip = document.getElementById("tooltip");
  return {points: l.at.length, shown: l.at.filter(t => t >= v.v0 && t <= v.v1).length,
    pixel: colour, tip: tip.hidden ? null : tip.textContent,
    options: document.getElementById("lin-pick").options.length,
    rows: document.querySelectorAll("#lin-steps tr").length,
    culprit: document.querySelector("#lin-steps .culprit").textContent,
    clicked: (() => {  // the first step of the side table, clicked: the view shows its op
      const a = document.querySelector("#lin-steps a[data-x]");
      a.click();
      const i = r.data.ops.x.indexOf(Number(a.dataset.x));
      return v.v0 <= tl.S[i] && tl.E[i] <= v.v1 && v.v1 - v.v0 < 1e5;
    })()};
})()"""
)


def assert_linearization_shown(lin: dict[str, Any], points: int, shown: int, rows: int) -> None:
    """What ``LINEARIZATION`` read, judged: at least ``points`` points, ``shown`` of them
    in the first view, the last drawn in the linearization's colour, hovering it says its
    place and the states around it, the side table has ``rows`` rows or more, ends on the
    op that cannot be linearized, and a click on its first step shows that op."""
    assert lin["points"] >= points and lin["shown"] >= shown
    assert lin["pixel"] == [0x0B, 0x72, 0x85]  # a linearization point is drawn there
    assert lin["options"] >= 1 and lin["rows"] >= rows
    assert "cannot be linearized" in lin["culprit"] and lin["clicked"]
    tip = lin["tip"]
    assert tip and f"operation {lin['points']} of {lin['points']}" in tip
    assert "state before" in tip and "state after" in tip and "takes effect at" in tip
