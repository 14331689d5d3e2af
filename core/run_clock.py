"""The run's clock: nanoseconds since the run started, the same in every process.

``CLOCK_MONOTONIC`` is system-wide on Linux, so a ``RunClock`` pickled into a worker, the
protected resource or the ``sim`` server reads the same time line as the runner: an op's
timestamp and a write's arrival time at the resource can be compared directly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RunClock:
    """Monotonic nanoseconds since ``origin`` (a ``time.monotonic_ns()`` reading)."""

    origin: int = field(default_factory=time.monotonic_ns)

    def now(self) -> int:
        return time.monotonic_ns() - self.origin

    def seconds(self) -> float:
        return self.now() / 1e9


NS_PER_S = 1_000_000_000


def ns(seconds: float) -> int:
    """Seconds to nanoseconds."""
    return int(seconds * NS_PER_S)
