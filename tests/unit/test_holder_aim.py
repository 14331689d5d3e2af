"""A fault aimed at the holder takes the current holder's node at once (issue 30, item 1):
no workload's holder owes the fault an event, so the lookup never eats the window."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from core.run_clock import RunClock
from nemesis.nodes import holder_node
from workloads.holders import INSTANCE


@dataclass
class View:
    """A run whose holders are 2 (on n2, the most recent) and 1 (on n1); none of them
    ever works (a registered instance), and none holds until ``holds_after`` calls."""

    holds_after: int = 0
    clock: RunClock = field(default_factory=RunClock)
    calls: int = 0
    holder = INSTANCE

    def holders(self) -> list[int]:
        self.calls += 1
        return [2, 1] if self.calls > self.holds_after else []

    def node_of(self, process: int) -> str | None:
        return {1: "n1", 2: "n2"}[process]

    def working_since(self, process: int) -> int | None:
        return None

    def client_pids(self) -> dict[int, int]:
        return {}


def test_the_most_recent_holder_is_taken_at_once() -> None:
    started = time.monotonic()
    assert holder_node(View(), wait=5.0) == "n2"  # type: ignore[arg-type]
    assert time.monotonic() - started < 0.05


def test_between_holdings_it_waits_for_the_next_holder_only() -> None:
    assert holder_node(View(holds_after=5), wait=2.0) == "n2"  # type: ignore[arg-type]
    assert holder_node(View(holds_after=10**9), wait=0.05) is None  # type: ignore[arg-type]
    assert holder_node(None) is None
