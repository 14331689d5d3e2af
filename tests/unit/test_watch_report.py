"""The watch workload's report section: a row per watcher, a line per watcher and the
writes'."""

from __future__ import annotations

from checkers.record import RunRecord
from core.history import History
from core.ops import Op
from workloads.section import RunView
from workloads.watch.report import section

S = 1_000_000_000


def test_a_row_and_a_line_per_watcher_and_nothing_without_watch_results() -> None:
    history = History(
        [
            Op(0, 1 * S, 5, "invoke", "write", 1, "0"),
            Op(1, 1 * S + 5, 5, "ok", "write", {"value": 1, "revision": 7}, "0"),
        ]
    )
    watchers = [
        {"process": 0, "mechanism": "m0", "delivered": 1, "missed": 0, "settled": True},
        {"process": 1, "mechanism": "m1", "delivered": 0, "missed": 1, "settled": True,
         "stale_final": {"0": [None, [1]]}},
    ]  # fmt: skip
    latency = {"0": {"count": 1, "p50": 1.0, "p99": 1.0, "per_second": [[1, 1]]}, "1": {"count": 0}}
    results = {
        "checkers": {
            "watch-delivery": {"summary": "s", "watchers": watchers},
            "watch-latency": {"watchers": latency},
        }
    }
    html = section(RunView(RunRecord(history), results))
    assert html.count("<tr>") == 3  # the header and two watchers
    assert "last write" in html and "stale" in html and "1.0 / 1.0" in html
    assert html.count("<polyline") == 2  # the writes and watcher 0 (watcher 1 got nothing)
    assert section(RunView(RunRecord(history), {"checkers": {"stats": {}}})) == ""
    assert section(RunView(RunRecord(history))) == ""
