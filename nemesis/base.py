"""The nemesis protocol: faults as operations of the ``nemesis`` thread.

A nemesis receives invocations (``start-pause``, ``stop-pause``, ``start-partition``...),
applies or heals a fault, and answers with a completion whose value records what it did
and the proof that it took effect. ``teardown`` heals everything the nemesis ever did and
is called on every exit path of a run (normal end, Ctrl-C, exception).

A fault that could not be proven to take effect completes with ``fail`` and an error
saying why; the run's verdict then cannot be ``valid`` (see ``checkers.faults``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.client import Completion, Invocation
from core.run_clock import RunClock
from workloads.holders import Holder


class RunView(Protocol):
    """What a nemesis may see of the run in progress."""

    clock: RunClock

    @property
    def holder(self) -> Holder | None:
        """Who the workload's holder is (``workloads.holders``); None: it has none."""
        ...

    def client_pids(self) -> dict[int, int]:
        """Live client process id -> OS pid of its worker."""
        ...

    def holders(self) -> list[int]:
        """Client processes holding now (a lock, a leadership, a registration: the
        workload's ``holder`` says), the most recent holder first."""
        ...

    def working_since(self, process: int) -> int | None:
        """When ``process`` invoked the holder's work it is doing now (``Holder.work``,
        run clock, ns); None when it is doing none."""
        ...

    def node_of(self, process: int) -> str | None:
        """The node ``process``'s client talks to (its thread's node, named by its
        completions), None when unknown or when clients talk to every node."""
        ...


@runtime_checkable
class Nemesis(Protocol):
    """Applies and heals faults."""

    def fs(self) -> frozenset[str]:
        """The operation names this nemesis handles."""
        ...

    def setup(self, view: RunView) -> None: ...

    def invoke(self, inv: Invocation) -> Completion: ...

    def teardown(self) -> None:
        """Heal everything; idempotent."""
        ...


class Compose:
    """Several nemeses behind one: each invocation goes to the one that handles its f."""

    def __init__(self, parts: list[Nemesis]) -> None:
        self.parts = parts
        self._by_f: dict[str, Nemesis] = {}
        for n in parts:
            for f in n.fs():
                if f in self._by_f:
                    raise ValueError(f"two nemeses handle {f!r}")
                self._by_f[f] = n

    def fs(self) -> frozenset[str]:
        return frozenset(self._by_f)

    def setup(self, view: RunView) -> None:
        for n in self.parts:
            n.setup(view)

    def invoke(self, inv: Invocation) -> Completion:
        n = self._by_f.get(inv.f)
        if n is None:
            return Completion("fail", error=f"no nemesis handles {inv.f!r}")
        return n.invoke(inv)

    def teardown(self) -> None:
        errors = []
        for n in reversed(self.parts):
            try:
                n.teardown()
            except Exception as e:  # heal the rest even when one part fails
                errors.append(f"{type(n).__name__}: {e}")
        if errors:
            raise RuntimeError("could not heal every fault: " + "; ".join(errors))
