"""The progress line's rate: smoothed, and never 0.0 at its first reading."""

from __future__ import annotations

import pytest
from rich.console import Console

from harness.progress import Progress, Rate
from harness.runner import Stats


def test_the_first_reading_is_the_average_since_the_operations_began() -> None:
    rate = Rate()
    assert rate(0.5, 0) is None and rate(2.0, 0) is None  # setting up: no rate yet
    assert rate(4.0, 100) == pytest.approx(50.0)  # 100 ops in the 2 s since they began
    fresh = Rate()
    assert fresh(5.0, 40) == pytest.approx(8.0)  # no idle reading: since the start


def test_the_rate_is_smoothed() -> None:
    rate = Rate(tau=5.0)
    rate(1.0, 100)  # 100 ops/s
    after_stall = rate(2.0, 100)  # one second without a completion
    assert after_stall is not None and 75 < after_stall < 100  # eased, not dropped to 0
    for t in range(3, 60):  # a steady 20 ops/s for a long while: converges to it
        steady = rate(float(t), 100 + 20 * (t - 2))
    assert steady == pytest.approx(20.0, rel=0.01)
    assert rate(59.0, 10_000) == steady  # no time passed: the same reading


def test_the_plain_line_never_reads_zero_at_first() -> None:
    stats = Stats()
    clock = iter([0.2, 3.0])
    progress = Progress(
        Console(file=None, force_terminal=False), stats, lambda: next(clock), 30, "t"
    )
    first = progress.line()
    assert "ops/s …" in first and "0.0" not in first
    stats.ok = 30
    assert "ops/s 10.7" in progress.line()  # 30 ops in the 2.8 s since the idle reading


def test_the_time_shown_is_the_workloads_not_the_clusters_start() -> None:
    """A run whose cluster took 40 s to start showed ``[0:43 / 0:38]``: the run's clock
    against the workload's length. The time shown starts when the progress does."""
    now = [40.0]
    progress = Progress(Console(file=None, force_terminal=False), Stats(), lambda: now[0], 38, "t")
    with progress:
        now[0] = 43.0
        assert progress.line().startswith("[0:03 / 0:38]")
        assert "remaining 0:35" in str([c for c in progress.render().columns[2].cells])
