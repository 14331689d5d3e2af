"""Which server answered each operation, as its client recorded it: ``served`` events.

A target's client may record, for each operation that read or took effect, the server
that answered, the role that server had (leader, follower) and the service's own log
positions in its answer, one client event each (ZooKeeper's: ``clusters.zookeeper.served``)::

    {"time": NS, "process": P, "event": "served", "server": "n1", "role": "leader",
     "position": "zxid", "hex": true, "applied": 4294967375, "version": 4294967374}

``applied``: the last position the server had applied when it answered; ``version``: the
position of the write that set the value read or written. The event is written between
the operation's invocation and its completion on the same process, which is how an
operation finds its own (``ServedIndex.lookup``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

EVENT: Final = "served"


@dataclass(frozen=True, slots=True)
class Served:
    """One answer: the server, its role, and the log positions it answered with."""

    server: str | None
    role: str | None
    position: str
    applied: int | None
    version: int | None
    hex: bool = False

    @classmethod
    def of(cls, e: dict[str, Any]) -> Served:
        return cls(
            _str(e.get("server")),
            _str(e.get("role")),
            str(e.get("position") or "position"),
            _int(e.get("applied")),
            _int(e.get("version")),
            e.get("hex") is True,
        )

    def where(self) -> str:
        """``n1, the leader,`` or ``n1`` (no role recorded) or ``an unnamed server``."""
        name = self.server or "an unnamed server"
        return f"{name}, the {self.role}," if self.role else name

    def pos(self, value: int | None) -> str:
        """A position in the service's words: ``zxid 0x10000004f``."""
        if value is None:
            return f"no {self.position}"
        return f"{self.position} {value:#x}" if self.hex else f"{self.position} {value}"


class ServedIndex:
    """The ``served`` events of a run, by process and time."""

    def __init__(self, events: Iterable[dict[str, Any]]) -> None:
        by: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
        for e in events:
            if e.get("event") == EVENT and isinstance(e.get("time"), int):
                by.setdefault(e.get("process"), []).append((e["time"], e))
        self._times: dict[Any, list[int]] = {}
        self._events: dict[Any, list[dict[str, Any]]] = {}
        for p, xs in by.items():
            xs.sort(key=lambda x: x[0])
            self._times[p] = [t for t, _ in xs]
            self._events[p] = [e for _, e in xs]

    def __bool__(self) -> bool:
        return bool(self._times)

    def lookup(self, process: Any, start: int | None, end: int | None) -> Served | None:
        """The answer of ``process``'s operation invoked at ``start`` and completed at
        ``end`` (None: never completed, so any later event is its); None when it recorded
        none."""
        times = self._times.get(process)
        if not times or start is None:
            return None
        i = bisect_left(times, start)
        if i == len(times) or (end is not None and times[i] > end):
            return None
        return Served.of(self._events[process][i])


def _str(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None
