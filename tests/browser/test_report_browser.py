"""The report, the index and the matrix in headless Chromium: they render offline (the
only request is the file itself), log no error, mark their first view rendered, and open
on what matters: the verdict, and for an invalid run the timeline zoomed on the anomaly."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report import compare, write_index, write_matrix_html, write_report
from tests.support.chromium import load_page
from tests.support.report_page import LINEARIZATION, PIXEL, assert_linearization_shown
from tests.support.report_page import load_report as _load
from tests.support.synthetic import cas_register_run, demo_runs

pytestmark = pytest.mark.browser

VIEW = {
    "v0": "HR.report.view.v0",
    "v1": "HR.report.view.v1",
    "focus": "HR.report.data.focus",
    "verdict": "document.getElementById('verdict').textContent",
    "headline": "document.querySelector('header.verdict li').textContent",
    "canvas": "document.getElementById('timeline').height",
}


# Hover the anomaly (the op that cannot be linearized, else the first stale write), then
# zoom with the wheel and pan by dragging: what a reader does first.
INTERACT = """(() => {
  const r = HR.report, tl = r.timeline, c = tl.canvas, v = r.view, d = r.data;
  const box = c.getBoundingClientRect(), w = c.clientWidth;
  let x, y;
  if (d.culprit >= 0) {
    const i = d.culprit;
    x = (v.x(tl.S[i], w) + v.x(tl.E[i], w)) / 2; y = tl.lanes[tl.L[i]].top + 10;
  } else {
    const k = d.writes.stale.indexOf(1);
    x = v.x(d.writes.s[k], w); y = tl.lanes[d.writes.lane[k]].top + 12;
  }
  const at = {clientX: box.left + x, clientY: box.top + y, bubbles: true};
  c.dispatchEvent(new MouseEvent("mousemove", at));
  const tip = document.getElementById("tooltip");
  const shown = tip.hidden ? null : tip.textContent;
  const span0 = v.v1 - v.v0;
  c.dispatchEvent(new WheelEvent("wheel", {...at, deltaY: -200, cancelable: true}));
  const span1 = v.v1 - v.v0, v0 = v.v0;
  c.dispatchEvent(new MouseEvent("mousedown", at));
  window.dispatchEvent(new MouseEvent("mousemove", {...at, clientX: at.clientX + 100}));
  window.dispatchEvent(new MouseEvent("mouseup", at));
  return {tip: shown, zoomed_in: span1 < span0, panned_back: v.v0 < v0};
})()"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("results"))


@pytest.mark.parametrize(
    ("run", "word", "zoomed"),
    [
        ("lock-fenced", "PASS", False),
        ("lock-unfenced", "FAIL", True),
        ("cas-stale-read", "FAIL", True),
    ],
)
def test_a_report_renders_offline_and_opens_on_the_anomaly(
    runs: dict[str, Path],
    run: str,
    word: str,
    zoomed: bool,
    save_screenshot: Callable[[str, bytes], tuple[Path, Path]],
) -> None:
    page = _load(write_report(runs[run]), VIEW)
    assert page.screenshot is not None
    save_screenshot(f"report-{run}", page.screenshot)
    v = page.values
    assert word in v["verdict"]
    assert v["canvas"] > 100
    if zoomed:  # the first view is the anomaly, not the whole run
        assert (v["v0"], v["v1"]) == pytest.approx((v["focus"]["s"], v["focus"]["e"]), rel=1e-6)
        assert "stale read" in v["headline"] or "accepted" in v["headline"]
        done = _load(runs[run] / "report.html", {"i": INTERACT}).values["i"]
        assert done["zoomed_in"] and done["panned_back"]
        assert "cannot be linearized" in done["tip"] or "STALE write accepted" in done["tip"]


def test_the_index_and_the_matrix_render_offline(
    runs: dict[str, Path],
    tmp_path: Path,
    save_screenshot: Callable[[str, bytes], tuple[Path, Path]],
) -> None:
    root = runs["cas-valid"].parents[1]
    index = _load(write_index(root), {"rows": "document.querySelectorAll('#runs tbody tr').length"})
    assert index.values["rows"] == 4
    assert index.screenshot is not None
    save_screenshot("index", index.screenshot)
    matrix = tmp_path / "matrix.html"
    write_matrix_html(compare([root]), matrix)
    page = load_page(matrix.resolve().as_uri(), timeout=20)
    assert page.errors == [] and page.requests == [matrix.resolve().as_uri()]
    assert page.screenshot is not None
    save_screenshot("matrix", page.screenshot)


@pytest.mark.slow
def test_a_100k_operation_report_renders_its_first_view_in_under_3_s(
    tmp_path: Path,
    save_screenshot: Callable[[str, bytes], tuple[Path, Path]],
) -> None:
    run = cas_register_run(
        tmp_path / "big" / "20260101T000000",
        ops=100_000,
        processes=10,
        keys=10,
        duration_s=100,
        faults=3,
    )
    page = _load(write_report(run), {"n": "HR.report.timeline.n"})
    assert page.values["n"] > 100_000  # client and nemesis operations
    assert page.render_ms is not None and page.render_ms < 3000
    assert page.screenshot is not None
    save_screenshot("report-100k", page.screenshot)


def test_an_invalid_cas_register_report_shows_the_partial_linearization(
    runs: dict[str, Path], save_screenshot: Callable[[str, bytes], tuple[Path, Path]]
) -> None:
    page = _load(write_report(runs["cas-stale-read"]), {"lin": LINEARIZATION})
    assert page.screenshot is not None
    save_screenshot("report-linearization", page.screenshot)
    assert_linearization_shown(page.values["lin"], points=100, shown=3, rows=3)


# Move the time cursor into the client pause, then onto the stale write, and flip the
# fencing switch there: the panel's rows, the ending and the stale write's colour.
CURSOR = (
    """(() => {
  """
    + PIXEL
    + """
  const r = HR.report, c = r.cursor, d = r.data, tl = r.timeline;
  const s = document.getElementById("cursor");
  const set = t => {
    s.value = String(t); s.dispatchEvent(new Event("input"));
    return Object.fromEntries(c.rows());
  };
  const k = d.writes.stale.indexOf(1), f = d.faults[0];
  const diamond = () => pixel(  // beside the cursor's line, on the stale write's diamond
    r.view.x(d.writes.s[k], tl.canvas.clientWidth) + 4, tl.lanes[d.writes.lane[k]].top + 12);
  const paused = set((f.s + f.e) / 2), stale = set(d.writes.s[k]);
  const ending = document.getElementById("ending").textContent, colour = diamond();
  document.getElementById("fencing-switch").click();
  return {paused, stale, ending, colour, flipped: Object.fromEntries(c.rows()),
    flipped_ending: document.getElementById("ending").textContent, flipped_colour: diamond(),
    time: document.getElementById("cursor-time").textContent};
})()"""
)


def test_the_time_cursor_and_the_fencing_switch_of_a_lock_report(
    runs: dict[str, Path], save_screenshot: Callable[[str, bytes], tuple[Path, Path]]
) -> None:
    page = _load(write_report(runs["lock-unfenced"]), {"c": CURSOR})
    assert page.screenshot is not None
    save_screenshot("report-cursor", page.screenshot)
    c = page.values["c"]
    # inside the pause: the frozen holder still believes it holds; the service says otherwise
    assert "believes it holds the lock (token 10), frozen by client-pause" in c["paused"]["p0"]
    assert "lease expired" in c["paused"]["p0"]
    assert c["paused"]["service"].startswith("holder p") and "p0" not in c["paused"]["service"]
    # at the stale write, as the run went (fencing off): accepted, p0 the last writer
    assert "stale write (token 10 < 23) ACCEPTED" in c["stale"]["verdict"]
    # whose data the resource holds: the stale writer's (an old run's values name nobody:
    # the cursor reads the writer and token the resource logged)
    assert c["stale"]["resource"].startswith("holds the write of process 0, token 10 ·")
    assert "accepted over token 23" in c["ending"] and "as the run went" in c["ending"]
    assert c["colour"] == [0xC0, 0x39, 0x2B]
    # flipped to fencing on: the same write rejected, the newer holder's data kept
    assert "rejected: protected" in c["flipped"]["verdict"]
    assert "holds the write of process 0" not in c["flipped"]["resource"]
    assert "token 23" in c["flipped"]["resource"]  # the newer holder's write, kept
    assert "is rejected (the resource had seen 23)" in c["flipped_ending"]
    assert c["flipped_colour"] == [0xE6, 0x7E, 0x22]
    assert c["flipped"]["p0"] == c["stale"]["p0"]  # the same timeline: beliefs unchanged


# --- real sim runs: the words of the workload, whose write the resource holds, the
# registry's time axis ------------------------------------------------------------------


@pytest.fixture(scope="module")
def sim_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An election run whose paused leader writes late (fencing off), and a registry run."""
    from harness.cli import main

    root = tmp_path_factory.mktemp("sim")
    runs = {
        "election": [
            *("--workload", "election", "--fencing", "off", "--lease-ttl", "2"),
            *("--keepalive", "0.5", "--pause-at", "3", "--pause-for", "6", "--time-limit", "11"),
        ],
        "registry": ["--workload", "registry", "--nemesis", "none", "--time-limit", "5"],
    }
    out = {}
    for name, args in runs.items():
        main(["run", *args, "--seed", "5", "-o", str(root / name)])
        out[name] = (root / name / "latest").resolve()
    return out


# The cursor set on the stale write itself (the slider snaps to its step), then its rows.
STALE_ROWS = """(() => {
  const r = HR.report, c = r.cursor, w = r.data.writes, k = w.stale.indexOf(1);
  c.t = w.s[k]; c.render();
  return {rows: Object.fromEntries(c.rows()), proc: w.proc[k], number: w.token[k],
    ending: document.getElementById("ending").textContent,
    legend: document.querySelector(".legend").textContent,
    switch: document.getElementById("fencing-switch").parentElement.textContent};
})()"""


def test_an_election_report_speaks_of_leaders_and_epochs(
    sim_runs: dict[str, Path], save_screenshot: Callable[[str, bytes], tuple[Path, Path]]
) -> None:
    run = sim_runs["election"]
    page = _load(write_report(run), {"c": STALE_ROWS})
    assert page.screenshot is not None
    save_screenshot("report-election-cursor", page.screenshot)
    c = page.values["c"]
    rows = c["rows"]
    assert rows["resource"].startswith(
        f"holds the write of process {c['proc']}, epoch {c['number']} ·"
    ), rows
    assert "stale write (epoch" in rows["verdict"] and "ACCEPTED" in rows["verdict"]
    assert rows["service"].startswith(("leader p", "no leader")), rows
    believers = [v for k, v in rows.items() if k.startswith("p") and "believes" in v]
    assert believers and all("holds the leadership (epoch " in v for v in believers)
    assert "epoch" in c["ending"] and "leadership (epoch)" in c["legend"]
    assert "an epoch below" in c["switch"]
    assert not any("token" in v for v in rows.values()), rows  # the lock's word, nowhere
    # what the resource held names its writer and epoch in the data itself
    log = [json.loads(line) for line in (run / "resource.jsonl").read_text().splitlines()]
    assert log and all(
        w["value"]["writer"] == w["writer"] and w["value"]["epoch"] == w["token"] for w in log
    )


AXIS = """(() => {
  const svg = document.querySelector("#membership svg");
  svg.scrollIntoView();
  const ticks = Array.from(svg.querySelectorAll("g.axis text")).slice(1);
  return {title: svg.querySelector("g.axis text").textContent, width: svg.width.baseVal.value,
    ticks: ticks.map(t => [t.textContent, Number(t.getAttribute("x"))])};
})()"""


def test_the_registry_chart_has_a_time_axis_in_seconds(
    sim_runs: dict[str, Path], save_screenshot: Callable[[str, bytes], tuple[Path, Path]]
) -> None:
    page = _load(write_report(sim_runs["registry"]), {"axis": AXIS})
    assert page.screenshot is not None
    save_screenshot("report-registry-axis", page.screenshot)
    axis = page.values["axis"]
    assert axis["title"] == "time (run clock)"
    labels = [text for text, _ in axis["ticks"]]
    assert len(labels) >= 3 and all(t.endswith(" s") for t in labels), labels
    seconds = [float(t[:-2]) for t in labels]
    xs = [x for _, x in axis["ticks"]]
    steps = {round(b - a, 6) for a, b in itertools.pairwise(seconds)}
    assert len(steps) == 1 and steps.pop() > 0, labels  # one nice step, increasing
    assert xs == sorted(xs) and xs[0] > 0 and xs[-1] <= axis["width"], xs
