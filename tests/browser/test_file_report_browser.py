"""The report of a history file in headless Chromium, as a porcupine user opens it: the
page ``harness check FILE --html OUT`` writes for a porcupine kv file and a Knossos EDN
file renders offline, opens on the counterexample, and shows the longest partial
linearization: its points drawn on the timeline, the state before and after each op on
hover, its steps in the side table; times in events, as these files record only order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from tests.support.report_page import LINEARIZATION, assert_linearization_shown, load_report

pytestmark = pytest.mark.browser

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "histories"

# What the page says of time and where the first view is: on the counterexample's key.
VIEW = {
    "verdict": "document.getElementById('verdict').textContent",
    "axis": "HR.fmtTime(HR.report.view.v0)",
    "first_lane": "HR.report.data.lanes[1].label",
    "culprit_lane": "HR.report.data.lanes[HR.report.data.ops.lane[HR.report.data.culprit]].label",
    "plots_hidden": "document.getElementById('latency').parentElement.hidden",
}


@pytest.mark.parametrize(
    ("name", "lane", "length"),
    [
        ("porcupine/kv/c01-bad.txt", "key 7 · p0", 3),
        ("knossos/cas-register/bad/cas-failure.edn", "p70", 179),
    ],
)
def test_a_history_file_report_shows_its_partial_linearization(
    tmp_path: Path,
    save_screenshot: Callable[[str, bytes], tuple[Path, Path]],
    name: str,
    lane: str,
    length: int,
) -> None:
    history = SHARED / name
    if not history.is_file():
        pytest.skip(f"reference history {history} not found (CI always has it)")
    out = tmp_path / "report.html"
    assert main(["check", str(history), "--html", str(out)]) == 1
    page = load_report(out, {**VIEW, "lin": LINEARIZATION})
    assert page.screenshot is not None
    save_screenshot(f"file-report-{history.stem}", page.screenshot)
    v = page.values
    assert "FAIL" in v["verdict"]
    assert v["axis"].startswith("event ") and v["plots_hidden"] is True
    assert v["first_lane"] == lane and v["culprit_lane"] == lane
    lin = v["lin"]
    assert lin["points"] == length  # every op of the longest linearization, drawn
    assert_linearization_shown(lin, points=length, shown=1, rows=2)
    assert "takes effect atevent " in lin["tip"]  # in events, as the file records them
