"""``write_report``: a run directory's ``report.html``, one self-contained file.

Reads the run's records and its ``results.json`` (it does not check the run: ``harness
check`` or the end of ``harness run`` does). Top to bottom: the verdict banner, the
shrunk counterexample (``_shrunk``: the fewest operations that still cannot be ordered),
the timeline opened on the anomaly with the latency and throughput plots under it, the
counterexample sections, the sections the run's workload declares (``Workload.sections``,
through ``_declared``), the configuration and the numbers, the run's files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from checkers.windows import FaultWindow, record_windows
from checkers.words import article
from core.errors import HarnessError
from core.history import MalformedHistory
from core.html import esc, tag
from core.store import (
    EVENTS_FILE,
    HISTORY_FILE,
    LOG_FILE,
    RESOURCE_FILE,
    RESULTS_FILE,
    TEST_FILE,
)
from harness.analysis import load_record, service_log
from harness.report._anomaly import annotate
from harness.report._declared import run_sections
from harness.report._explain import explanations
from harness.report._fencing import replay
from harness.report._html import page
from harness.report._metrics import op_stats
from harness.report._out import write_page
from harness.report._runs import RunInfo, load_run
from harness.report._sections import (
    banner,
    banner_sentences,
    configuration,
    numbers,
    one_line_config,
)
from harness.report._shrunk import shrunk_section
from harness.report._timeline import build_timeline

REPORT_FILE = "report.html"
SCRIPTS = (
    "view.js",
    "timeline.js",
    "faults.js",
    "tips.js",
    "linearization.js",
    "cursor.js",
    "plots.js",
    "report.js",
)
_LEGEND = (  # (what the timeline shows, its colour, the feature it belongs to)
    ("ok", "#3f9d57", "ops"),
    ("fail", "#d9534f", "ops"),
    ("info (unknown outcome)", "#f0a202", "ops"),
    ("never returned", "#9b8fc7", "ops"),
    ("fault window", "rgba(230,80,60,0.25)", "faults"),
    ("{tenure} ({number})", "#5b8def", "holds"),
    ("{tenure} lost with its lease", "#c0392b", "holds"),
    ("lease certainly alive", "#2a9d8f", "leases"),
    ("lease perhaps alive", "rgba(42,157,143,0.35)", "leases"),
    ("write accepted", "#3f9d57", "writes"),
    ("write rejected", "#8a8a8a", "writes"),
    ("stale write accepted", "#c0392b", "writes"),
    ("stale write rejected", "#e67e22", "writes"),
    ("danger window", "rgba(192,57,43,0.35)", "danger"),
    ("handover delay", "#8e44ad", "handover"),
    ("counterexample window", "rgba(66,133,244,0.35)", "window"),
    ("linearization point (in order)", "#0b7285", "lin"),
)


def write_report(run_dir: Path) -> Path:
    """Write ``run_dir/report.html`` (atomically, never through a link) and return its path.

    Raises ``core.errors.HarnessError`` when ``run_dir`` has no history.
    """
    run_dir = Path(run_dir)
    return write_page(run_dir / REPORT_FILE, render_report(run_dir))


def render_report(run_dir: Path, results: dict[str, Any] | None = None) -> str:
    """The report page of a run directory, as text; ``results`` (a check's, not yet
    written to the run directory) stand for its ``results.json``."""
    run = load_run(run_dir)
    if results is not None:
        run = replace(run, results=results)
    record = load_record(run_dir)
    data: dict[str, Any] = {"timeline": None}
    windows: list[FaultWindow] | None
    try:
        windows = record_windows(record)
        timeline, lanes = build_timeline(record, run.results, windows)
        annotate(run.results, timeline, lanes)
        timeline["fencing"] = replay(
            record.resource_log, record.option("fencing"), timeline["words"]["number"]
        )
        data["timeline"] = timeline
        figure = timeline_figure(timeline)
        stats = numbers(op_stats(record.history, windows), windows)
    except MalformedHistory as e:
        figure = tag(
            "p", esc(f"The history is malformed, so no timeline is drawn: {e}"), id="timeline-error"
        )
        stats, windows = "", None
    body = (
        banner(run)
        + "<main>"
        + shrunk_section(run.results, HISTORY_FILE)
        + figure
        + explanations(run.results, banner_sentences(run))
        + run_sections(run, record, windows)
        + tag("h2", "Configuration")
        + configuration(run)
        + (tag("h2", "Numbers") + stats if stats else "")
        + tag("h2", "Files")
        + _files(run)
        + "</main>"
        + '<div id="tooltip" hidden></div>'
    )
    title = f"{run.verdict.upper()}: {one_line_config(run)}"
    return page(title, body, styles=("base.css", "report.css"), scripts=SCRIPTS, data=data)


def timeline_figure(timeline: dict[str, Any]) -> str:
    """The timeline's figure of ``timeline`` (annotated, with its ``fencing``): toolbar,
    legend of what it shows, canvases."""
    return _figure(_features(timeline), timeline.get("fencing"), timeline["words"])


def _features(timeline: dict[str, Any]) -> set[str]:
    """What this run's timeline shows, so the legend lists only that."""
    features = {"ops"} | {m["kind"] for m in timeline["marks"]}
    if timeline.get("lin"):
        features.add("lin")
    if timeline["faults"]:
        features.add("faults")
    features |= {name for name in ("holds", "leases", "writes") if timeline[name]["s"]}
    return features


def _figure(features: set[str], fencing: dict[str, Any] | None, words: dict[str, Any]) -> str:
    """The timeline, its legend (a holding named in the run's ``words``: holding (token),
    leadership (epoch)), the cursor and the plots."""
    legend = "".join(
        tag("span", f'<i style="background:{c}"></i>{esc(n.format(**words))}')
        for n, c, f in _LEGEND
        if f in features
    )
    toolbar = (
        '<button id="focus" hidden></button><button id="whole">Whole run</button>'
        '<label><input type="checkbox" id="dim"> dim operations outside the counterexample'
        "</label>"
        + tag("label", 'draw <select id="lin-pick"></select>', hidden=True)
        + tag("span", "", id="range")
        + tag(
            "span",
            "wheel: zoom · drag: pan · double-click: whole run · hover: details",
            class_="hint",
        )
    )
    canvases = [
        tag("div", tag("canvas", "", id=c), class_="canvas-wrap")
        for c in ("timeline", "latency", "throughput")
    ]
    if fencing:  # under the timeline it reads
        canvases.insert(1, _cursor_panel(fencing, words))
    return tag(
        "section",
        tag("div", toolbar, class_="toolbar")
        + tag("div", legend, class_="legend")
        + "".join(canvases)
        + tag("p", "", id="timeline-error", hidden=True),
        id="figure",
    )


def _cursor_panel(fencing: dict[str, Any], words: dict[str, Any]) -> str:
    """The time cursor and the fencing switch (``cursor.js`` fills the table); without
    them, when replaying the run's own mode does not give back its resource log, a line
    saying so."""
    if not fencing.get("agrees"):
        return tag(
            "p",
            "No time cursor: replaying the resource's rule does not give back this run's "
            "resource log (or the run did not record whether fencing was on).",
            class_="muted",
        )
    return tag(
        "div",
        tag(
            "div",
            tag("label", 'time cursor <input type="range" id="cursor">')
            + tag("span", "", id="cursor-time")
            + tag(
                "label",
                '<input type="checkbox" id="fencing-switch"> fencing on (the resource rejects '
                + esc(f"{article(words['number'])} below the highest it has seen)")
                + ": the same writes, replayed",
            ),
            class_="toolbar",
        )
        + tag("table", "", id="cursor-state", class_="cursor")
        + tag("p", "", id="ending"),
        id="cursor-panel",
        hidden=True,
    )


def _files(run: RunInfo) -> str:
    names = (
        TEST_FILE,
        HISTORY_FILE,
        RESULTS_FILE,
        RESOURCE_FILE,
        EVENTS_FILE,
        LOG_FILE,
        _service_log(run),
        "nodes",
    )
    present = [n for n in names if n is not None and (run.path / n).exists()]
    return tag("p", " · ".join(tag("a", esc(n), href=n) for n in present) or "none")


def _service_log(run: RunInfo) -> str | None:
    """The run's service log, if it names one the page may link to."""
    try:
        return service_log(run.test)
    except HarnessError:
        return None
