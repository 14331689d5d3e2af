"""The lock-free workloads' client: the lock workload's protected work, guarded by the data
itself instead of a lock (``version-cas``, ``unique-key``).

A client loops ``begin`` -> ``write``, as a lock client loops acquire -> write -> release:

- ``begin`` (value ``{"name": N}``): learn the *basis* of the next write from the data:
  the row's version (version-cas), the next job not yet done (unique-key) -> ok
  ``{"name": N, "basis": B}``;
- ``write``: compute for ``work`` s (the critical section's work,
  ``workloads.common.critical.compute_for``), then a write the data accepts only on that basis:
  ``UPDATE ... WHERE version = B`` or a compare on etcd's ``mod_revision``; an ``INSERT``
  of key B under a UNIQUE constraint -> ok ``{"name", "basis", "value"}``, or fail
  ``rejected by the data: ...`` (definite: nothing changed), value ``{"name", "basis"}``.

No lease, no token, no lock: a client frozen between ``begin`` and its write wakes with a
stale basis, and the data refuses its write. ``checkers.guarded`` judges the runs. A target
supplies a ``GuardedStore`` (its driver, raising ``workloads.errors`` classes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from checkers.refusals import REJECTED_BY_DATA
from core.client import Client, Completion, Invocation, WorkerContext
from core.options import RunOptions
from workloads.common.backoff import Backoff
from workloads.common.critical import compute_for
from workloads.common.factories import Builder, Connector, connector
from workloads.common.lock_options import LockOptions

REJECTED = REJECTED_BY_DATA
"""The error of a write the data refused (``checkers.guarded`` counts these)."""


class GuardedStore(Protocol):
    """A driver whose writes the data accepts only on the basis they were begun on."""

    def begin(self, name: str) -> int:
        """The basis of the next write to ``name`` (a version, a job number)."""
        ...

    def write(self, name: str, basis: int, value: Any) -> str | None:
        """Write ``value`` on ``basis``: None when the data accepted it, else why it
        refused (definite). ``OpFailed``/``OpUnknown`` otherwise."""
        ...

    def close(self) -> None: ...


class GuardedClient:
    """One worker's client (``core.client.Client``): ``begin`` / ``write``."""

    def __init__(
        self, ctx: WorkerContext, connect: Callable[[], GuardedStore], work: float
    ) -> None:
        self.ctx, self.work = ctx, work
        self.backend = connect()
        self.basis: tuple[str, int] | None = None
        self.backoff = Backoff(seed=ctx.process)

    def invoke(self, inv: Invocation) -> Completion:
        """One operation, its failure paced by the backoff while the service is unreachable."""
        return self.backoff.run(lambda: self._do(inv))

    def _do(self, inv: Invocation) -> Completion:
        if inv.f == "begin":
            name = str((inv.value or {}).get("name", "cell"))
            self.basis = None
            basis = self.backend.begin(name)
            self.basis = (name, basis)
            return Completion("ok", {"name": name, "basis": basis})
        if inv.f == "write":
            return self._write()
        return Completion("fail", error=f"unknown function {inv.f!r}; offered: begin, write")

    def _write(self) -> Completion:
        if self.basis is None:
            return Completion("fail", error="nothing begun to write on")
        (name, basis), self.basis = self.basis, None
        compute_for(self.work)
        value = {"writer": self.ctx.process, "basis": basis}
        refused = self.backend.write(name, basis, value)
        if refused is not None:
            return Completion("fail", {"name": name, "basis": basis}, f"{REJECTED}: {refused}")
        return Completion("ok", {"name": name, "basis": basis, "value": value})

    def close(self) -> None:
        self.backend.close()


@dataclass(frozen=True, slots=True)
class GuardedFactory:
    """``GuardedClient``s over a target's ``GuardedStore`` connections."""

    connector: Connector
    work: float

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, _ = self.connector.for_slot(ctx.slot)
        return GuardedClient(ctx, connect, self.work)


def guarded_clients(driver: Callable[..., GuardedStore]) -> Builder:
    """The clients of a lock-free workload over ``driver`` connections."""

    def build(opts: RunOptions, cluster: Any, resource: str | None) -> GuardedFactory:
        return GuardedFactory(
            connector(opts, cluster, driver, spread=False), opts.record(LockOptions).work_time
        )

    return build
