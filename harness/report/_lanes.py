"""Timeline lanes: which row of the timeline each process is drawn on.

One lane per process. A process that replaced one whose operation ended ``info`` (the
runner gives the thread a new process id, old id + concurrency) gets a lane of its own,
right under the lane of the process it replaces and linked to it (``after``): the frozen
holder and its replacement are two rows, not bars drawn over each other. Lane 0 is the
nemesis; the resource and clock lanes come after the clients.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.ops import NEMESIS, Process


@dataclass(slots=True)
class Lane:
    """A row of the timeline: ``kind`` is nemesis, client, resource or clock; ``after``
    the lane of the process this one replaced (-1: none)."""

    label: str
    kind: str
    processes: list[Process] = field(default_factory=list)
    after: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "processes": [str(p) for p in self.processes],
            "after": self.after,
        }


class Lanes:
    """The lanes of a run and the lane of each process."""

    def __init__(self, processes: Iterable[Process], concurrency: int | None) -> None:
        clients = [p for p in dict.fromkeys(processes) if p != NEMESIS]
        self.lanes: list[Lane] = [Lane("faults", "nemesis", [NEMESIS])]
        self._of: dict[Process, int] = {NEMESIS: 0}
        threaded = bool(concurrency) and all(
            isinstance(p, int) and not isinstance(p, bool) for p in clients
        )
        threads: dict[Any, list[Process]] = {}
        for p in sorted(clients, key=_order):
            thread = p % concurrency if threaded and concurrency and isinstance(p, int) else p
            threads.setdefault(thread, []).append(p)
        for thread in sorted(threads, key=_order):
            before = -1
            for p in threads[thread]:
                label = f"p{p}" if before < 0 else f"p{p} ← p{self.lanes[before].processes[0]}"
                self._of[p] = len(self.lanes)
                self.lanes.append(Lane(label, "client", [p], before))
                before = self._of[p]

    def of(self, process: Process) -> int:
        """The lane of a process (a process never seen gets a lane of its own)."""
        lane = self._of.get(process)
        if lane is None:
            lane = self._of[process] = len(self.lanes)
            self.lanes.append(Lane(f"p{process}", "client", [process]))
        return lane

    def add(self, label: str, kind: str) -> int:
        """Append a lane (resource, clock) and return its number."""
        self.lanes.append(Lane(label, kind))
        return len(self.lanes) - 1

    def to_list(self) -> list[dict[str, Any]]:
        return [lane.to_dict() for lane in self.lanes]


def _order(p: Any) -> tuple[int, Any]:
    return (0, p) if isinstance(p, int) else (1, str(p))
