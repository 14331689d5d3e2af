"""Timeline lanes: which row of the timeline each process is drawn on.

One lane per client process, except that a process that replaced a crashed one (the
runner gives a thread a new process id, old id + concurrency, after an ``info``) shares
the lane of its thread: the two never overlap in time, and a run with many timeouts stays
a handful of rows instead of hundreds. Lane 0 is the nemesis; the resource and clock lanes
come after the clients.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.ops import NEMESIS, Process

_MAX_LABEL_PROCESSES = 4


@dataclass(slots=True)
class Lane:
    """A row of the timeline: ``kind`` is nemesis, client, resource or clock."""

    label: str
    kind: str
    processes: list[Process] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "processes": [str(p) for p in self.processes],
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
        slots: dict[Any, list[Process]] = {}
        for p in sorted(clients, key=_order):
            slot = p % concurrency if threaded and concurrency and isinstance(p, int) else p
            slots.setdefault(slot, []).append(p)
        for slot in sorted(slots, key=_order):
            members = slots[slot]
            for p in members:
                self._of[p] = len(self.lanes)
            self.lanes.append(Lane(_label(members), "client", members))

    def of(self, process: Process) -> int:
        """The lane of a process (a process never seen gets a lane of its own)."""
        lane = self._of.get(process)
        if lane is None:
            lane = self._of[process] = len(self.lanes)
            self.lanes.append(Lane(_label([process]), "client", [process]))
        return lane

    def add(self, label: str, kind: str) -> int:
        """Append a lane (resource, clock) and return its number."""
        self.lanes.append(Lane(label, kind))
        return len(self.lanes) - 1

    def to_list(self) -> list[dict[str, Any]]:
        return [lane.to_dict() for lane in self.lanes]


def _order(p: Any) -> tuple[int, Any]:
    return (0, p) if isinstance(p, int) else (1, str(p))


def _label(members: list[Process]) -> str:
    if len(members) <= _MAX_LABEL_PROCESSES:
        return "p" + " → ".join(str(p) for p in members)
    return f"p{members[0]} → … → {members[-1]} ({len(members)})"
