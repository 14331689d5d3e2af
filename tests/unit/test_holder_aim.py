"""A fault aimed at the holder cuts the node of a holder that has just begun its work."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.clock import RunClock
from nemesis.nodes import holder_node


@dataclass
class View:
    """A run with holders 1 (on n1, writing since before the fault was asked) and 2 (on
    n2, which starts its write ``starts_after`` calls of ``writing_since`` later)."""

    starts_after: int
    clock: RunClock = field(default_factory=RunClock)
    calls: int = 0
    started: int | None = None

    def lock_holders(self) -> list[int]:
        return [1, 2]

    def node_of(self, process: int) -> str | None:
        return {1: "n1", 2: "n2"}[process]

    def writing_since(self, process: int) -> int | None:
        if process == 1:
            return 0
        self.calls += 1
        if self.calls >= self.starts_after and self.started is None:
            self.started = self.clock.now()
        return self.started

    def client_pids(self) -> dict[int, int]:
        return {}


def test_the_holder_that_begins_its_work_is_the_one_cut_off() -> None:
    assert holder_node(View(starts_after=20), wait=2.0) == "n2"  # type: ignore[arg-type]


def test_without_a_fresh_holder_any_holder_will_do() -> None:
    assert holder_node(View(starts_after=10**9), wait=0.05) == "n1"  # type: ignore[arg-type]
    assert holder_node(None) is None
