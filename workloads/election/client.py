"""The election workload's client, for any target with leases and leader election.

Operations: ``campaign`` (value: the candidate's value, default its process id, or a dict
``{"name": election, "value": v}``) blocks up to ``wait`` s until leader -> ok
``{"epoch": n, "lease": id, "name": election}``, fail ``"not elected"``;
``observe`` -> ok ``{"leader": value, "epoch": n}``; ``write`` while believing it leads:
the critical section with the epoch as fencing token; ``resign``. ``observe`` changes
nothing, so any failure of it, even with an unknown outcome, is a ``fail``.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.client import Completion, Invocation
from workloads.common.holder import LeaseHolderClient
from workloads.common.lease import Lease, LeaseBackend
from workloads.errors import OpUnknown


class ElectionBackend(LeaseBackend, Protocol):
    """A driver offering leader election on leases, with increasing epochs."""

    def campaign(self, name: str, lease: Lease, value: Any, wait: float) -> int: ...

    def observe(self, name: str) -> tuple[Any, int | None]: ...

    def resign(self, name: str, lease: Lease) -> None: ...


class ElectionClient(LeaseHolderClient[ElectionBackend]):
    """One worker's election client: ``campaign`` / ``observe`` / ``write`` / ``resign``."""

    take_f = "campaign"
    give_f = "resign"
    number_key = "epoch"

    def _claim(self, name: str, lease: Lease, value: Any) -> int:
        if isinstance(value, dict):
            value = value.get("value")
        value = self.ctx.process if value is None else value
        return self.backend.campaign(name, lease, value, self.wait)

    def _unclaim(self, name: str, lease: Lease) -> None:
        self.backend.resign(name, lease)

    def _other(self, inv: Invocation) -> Completion:
        if inv.f != "observe":
            return super()._other(inv)
        try:
            leader, epoch = self.backend.observe(self._name_of(inv.value))
        except OpUnknown as e:
            return Completion("fail", error=str(e), node=self.node)
        return Completion("ok", {"leader": leader, "epoch": epoch}, node=self.node)
