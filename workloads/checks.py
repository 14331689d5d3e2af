"""Which checkers a workload's runs get.

- lock: mutual exclusion with the cause of every overlap and stale write
  (``checkers.mutex``), fencing-number monotonicity and enforcement (``checkers.fencing``),
  lease-aware owner-aware mutex linearizability for targets whose locks claim it
  (``checkers.mutex_lin``), and statistics (``checkers.stats``);
- election: election safety (``checkers.election``) and statistics;
- cas-register: linearizability per key, against a register that starts empty (nil) and
  where a failed CAS did not happen, and statistics.

Every checker reads the run's ``RunRecord`` only; the fault windows are derived from its
history once per checker (cheap) so each stays a pure function of the record.
"""

from __future__ import annotations

from collections.abc import Callable

from checkers import linearizability
from checkers.election import check_election
from checkers.fencing import check_fencing
from checkers.holdings import LOCK
from checkers.mutex import check_mutex
from checkers.mutex_lin import check_mutex_linearizable
from checkers.record import RunRecord
from checkers.result import CheckResult
from checkers.stats import check_stats
from checkers.windows import record_windows

Checker = Callable[[RunRecord], CheckResult]
CAS_MODEL = "register"


def _mutex(record: RunRecord) -> CheckResult:
    return check_mutex(
        record.resource_log,
        record.history,
        record.events,
        record.service_events,
        record_windows(record),
        terms=LOCK,
    )


def _fencing(record: RunRecord) -> CheckResult:
    return check_fencing(
        record.resource_log,
        record.history,
        record.events,
        record.service_events,
        record_windows(record),
        enforced=record.options.get("fencing"),
    )


def _election(record: RunRecord) -> CheckResult:
    return check_election(
        record.resource_log,
        record.history,
        record.events,
        record.service_events,
        record_windows(record),
    )


def _stats(record: RunRecord) -> CheckResult:
    return check_stats(
        record.history,
        record_windows(record),
        accept_unavailable=bool(record.extra.get("accept_unavailable")),
    )


def _mutex_linearizable(time_limit: float | None) -> Checker:
    def mutex_linearizable(record: RunRecord) -> CheckResult:
        return check_mutex_linearizable(
            record.history, record.events, record.service_events, time_limit
        )

    return mutex_linearizable


def _linearizable(time_limit: float | None) -> Checker:
    def linearizable(record: RunRecord) -> CheckResult:
        model = record.extra.get("model", CAS_MODEL)
        return linearizability.check(record.history.client_ops(), model, time_limit)

    return linearizable


def checkers_for_workload(record: RunRecord, time_limit: float | None = None) -> list[Checker]:
    """The checkers of the run's workload (see the module docstring)."""
    workload = record.options.get("workload")
    if workload == "lock":
        checks: list[Checker] = [_mutex, _fencing]
        if record.test.get("linearizable_locks"):
            checks.append(_mutex_linearizable(time_limit if time_limit is not None else 60.0))
        return [*checks, _stats]
    if workload == "election":
        return [_election, _stats]
    if workload == "cas-register":
        return [_linearizable(time_limit if time_limit is not None else 300.0), _stats]
    return [_linearizable(time_limit)]
