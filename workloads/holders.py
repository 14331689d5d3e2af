"""Who a workload's holder is: what ``--nemesis-target holder`` aims at.

Each workload that has one says so in its operations (``Workload.holder``): the lock and
herd holder (after an ``acquire``, until it invokes ``release``: the lock workload's own,
``workloads.lock.ops.LOCK_HOLDER``), the election leader
(``campaign`` .. ``resign``), the registered instance (after ``register``), the watch
writer (after a ``write``), the lock-free client working on the basis it read (after
``begin``). The runner follows the holders op by op (``Holders``) and a nemesis asks it
who holds now (``nemesis.base.RunView``): the answer never waits on an operation the
workload does not have. ``work`` names the operations a holder works in while it holds (a
critical section's write): a client pause freezes the holder at the start of one, the worst
moment for it; a workload whose holders have no such work has its holder frozen at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.ops import Op


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds, in a workload's operations: see the module docstring."""

    role: str
    """What the holder is, in words: ``lock holder``, ``leader``..."""
    takes: frozenset[str]
    """An ok of one of these makes its process a holder (the most recent one first)."""
    gives: frozenset[str] = frozenset()
    """Invoking one of these ends the process's holding."""
    work: frozenset[str] = frozenset()
    """What a holder works in while holding (a client pause waits for one to begin); empty:
    a holder is frozen at once."""
    number: str | None = None
    """What a take grants the holder to fence with (``token``, ``epoch``): its holdings are
    the ones ``checkers.holdings`` reads and the report draws; None: not numbered holdings,
    which neither reads."""

    def to_dict(self) -> dict[str, Any]:
        """What test.json records of it (``holder``), for the checkers and the report of the
        finished run: they read the operation names from there, not from a list of their own."""
        return {
            "role": self.role,
            "takes": sorted(self.takes),
            "gives": sorted(self.gives),
            "work": sorted(self.work),
            "number": self.number,
        }


@dataclass(slots=True)
class Holders:
    """The holders of a run in progress, fed every op by the runner (one thread)."""

    holder: Holder | None
    since: dict[int, int] = field(default_factory=dict)
    """Holding process -> when its holding began (run clock, ns)."""

    def follow(self, op: Op) -> None:
        """Learn from one op of a client: an ok take begins a holding, an invoked give or
        an ``info`` (the process is retired) ends it."""
        if self.holder is None or not isinstance(op.process, int):
            return
        if op.type == "ok" and op.f in self.holder.takes:
            self.since[op.process] = op.time
        elif op.type == "info" or (op.type == "invoke" and op.f in self.holder.gives):
            self.forget(op.process)

    def forget(self, process: int) -> None:
        """End ``process``'s holding whatever it did (its worker was stopped)."""
        self.since.pop(process, None)

    def current(self) -> list[int]:
        """The holding processes, the most recent holder first."""
        return sorted(self.since, key=lambda p: -self.since[p])

    def works_in(self, f: str) -> bool:
        """Whether ``f`` is the work of a holder (``Holder.work``)."""
        return self.holder is not None and f in self.holder.work


LEADER = Holder(
    "leader", frozenset({"campaign"}), frozenset({"resign"}), frozenset({"write"}), "epoch"
)
INSTANCE = Holder("registered instance", frozenset({"register"}))
WRITER = Holder("writer", frozenset({"write"}))
WORKER = Holder("client working on its basis", frozenset({"begin"}), work=frozenset({"write"}))
"""The lock-free workloads' holder (``workloads.guarded``): it works on the basis it read."""
