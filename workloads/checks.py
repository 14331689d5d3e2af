"""Which checkers a workload's runs get.

- lock: mutual exclusion and fencing over the resource log, the clients' operations and
  their lease events (``checkers.mutex``);
- election: the same, a term of leadership being a holding;
- cas-register: linearizability per key, against a register that starts empty (nil) and
  where a failed CAS did not happen.
"""

from __future__ import annotations

from collections.abc import Callable

from checkers import linearizability
from checkers.mutex import check_mutex
from checkers.record import RunRecord
from checkers.result import CheckResult

Checker = Callable[[RunRecord], CheckResult]
CAS_MODEL = "register"


def _mutex(record: RunRecord) -> CheckResult:
    return check_mutex(record.resource_log, record.history, record.events)


def _linearizable(time_limit: float | None) -> Checker:
    def linearizable(record: RunRecord) -> CheckResult:
        model = record.options.get("extra", {}).get("model", CAS_MODEL)
        return linearizability.check(record.history.client_ops(), model, time_limit)

    return linearizable


def checkers_for_workload(record: RunRecord, time_limit: float | None = None) -> list[Checker]:
    workload = record.options.get("workload")
    if workload in ("lock", "election"):
        return [_mutex]
    if workload == "cas-register":
        return [_linearizable(time_limit if time_limit is not None else 300.0)]
    return [_linearizable(time_limit)]
