"""``harness compare`` shows a watch run's deliveries; several runs in a cell pool them."""

from __future__ import annotations

from harness.report._compare import WatchNumbers


def test_watch_numbers_of_a_run_and_pooled() -> None:
    checkers = {
        "watch-delivery": {
            "watchers": [
                {"delivered": 5, "missed": 1, "compactions": 1, "handled": 1},
                {"delivered": 3, "missed": 0, "stale_final": {"0": [1, [2]]}},
            ]
        },
        "watch-latency": {"p99": 12.5},
    }
    one = WatchNumbers.of(checkers)
    assert one == WatchNumbers(8, 1, 1, 1, 1, 12.5)
    assert WatchNumbers.of({"mutex": {}}) is None
    both = WatchNumbers.pool([one, WatchNumbers(2, 0, 0, 0, 0, None)])
    assert both.line() == (
        "10 delivered, 1 missed, 1 stale final, compactions 1/1 handled, p99 12.5 ms"
    )
