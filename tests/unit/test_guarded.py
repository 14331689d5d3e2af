"""The lock-free workloads without a service: the client's begin/write loop over CAS
registers (an in-memory register stands in for a service's), and ``checkers.guarded``.

The data must refuse a second write on a basis (a version, a job's key) and the checker
must tell a frozen client's refused late write from two accepted ones (invalid).
"""

from __future__ import annotations

from typing import Any

from checkers import guarded
from checkers.record import RunRecord
from core.client import Invocation, WorkerContext
from core.history import History
from core.ops import Op
from core.run_clock import RunClock
from workloads.guarded import REJECTED, GuardedClient
from workloads.guarded_register import RegisterKeys, RegisterVersions


class Mismatch(Exception):
    pass


class Registers:
    """An in-memory CAS register per key, shared by the clients (a unit-test fake)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def read(self, key: str) -> Any:
        return self.values.get(key)

    def write(self, key: str, value: Any) -> None:
        self.values[key] = value

    def cas(self, key: str, old: Any, new: Any) -> None:
        if self.values.get(key) != old:
            raise Mismatch(key)
        self.values[key] = new

    def close(self) -> None:
        pass


def clients(store: type[RegisterVersions] | type[RegisterKeys]) -> list[GuardedClient]:
    shared = Registers()
    return [
        GuardedClient(WorkerContext(p, RunClock()), lambda: store(shared, Mismatch), 0.0)
        for p in (0, 1)
    ]


def test_version_cas_lets_one_of_two_writes_on_a_version_in() -> None:
    a, b = clients(RegisterVersions)
    begun = [c.invoke(Invocation("begin", {"name": "cell-0"})) for c in (a, b)]
    assert [x.value["basis"] for x in begun] == [0, 0]
    first, late = a.invoke(Invocation("write")), b.invoke(Invocation("write"))
    assert first.type == "ok" and first.value["basis"] == 0
    assert late.type == "fail" and late.error and late.error.startswith(REJECTED)
    assert b.invoke(Invocation("begin", {"name": "cell-0"})).value["basis"] == 1
    assert b.invoke(Invocation("write")).type == "ok"


def test_unique_key_refuses_a_repeated_effect_and_moves_on_to_the_next_job() -> None:
    a, b = clients(RegisterKeys)
    assert [c.invoke(Invocation("begin", {"name": "jobs-0"})).value["basis"] for c in (a, b)] == [
        1,
        1,
    ]
    assert a.invoke(Invocation("write")).type == "ok"
    again = b.invoke(Invocation("write"))
    assert again.type == "fail" and "job 1 of jobs-0 is already done" in (again.error or "")
    assert b.invoke(Invocation("begin", {"name": "jobs-0"})).value["basis"] == 2


def test_a_write_without_a_begin_is_a_definite_fail() -> None:
    (a, _) = clients(RegisterVersions)
    assert a.invoke(Invocation("write")).type == "fail"


S = 1_000_000_000


def history(late_outcome: str) -> History:
    """Process 0 begins on version 3, is frozen mid-write; process 1 writes on version 3
    meanwhile; process 0's write ends as ``late_outcome``."""
    rows: list[tuple[int, Any, str, str, Any, str | None]] = [
        (1 * S, 0, "invoke", "begin", {"name": "cell-0"}, None),
        (2 * S, 0, "ok", "begin", {"name": "cell-0", "basis": 3}, None),
        (3 * S, 0, "invoke", "write", None, None),
        (4 * S, "nemesis", "invoke", "start-client-pause", {"target": "holder"}, None),
        (5 * S, "nemesis", "ok", "start-client-pause", {"processes": [0]}, None),
        (6 * S, 1, "invoke", "begin", {"name": "cell-0"}, None),
        (7 * S, 1, "ok", "begin", {"name": "cell-0", "basis": 3}, None),
        (8 * S, 1, "invoke", "write", None, None),
        (9 * S, 1, "ok", "write", {"name": "cell-0", "basis": 3, "value": 1}, None),
        (10 * S, "nemesis", "invoke", "stop-client-pause", None, None),
        (11 * S, "nemesis", "ok", "stop-client-pause", {"processes": [0]}, None),
    ]
    value = {"name": "cell-0", "basis": 3}
    error = f"{REJECTED}: cell-0 is no longer at version 3" if late_outcome == "fail" else None
    rows.append((12 * S, 0, late_outcome, "write", value, error))
    return History(Op(i, t, p, kind, f, v, error=e) for i, (t, p, kind, f, v, e) in enumerate(rows))


def test_a_frozen_clients_late_write_refused_by_the_data_is_valid_and_told() -> None:
    result = guarded.check_record(RunRecord(history("fail")))
    assert result.valid is True
    assert result.details["late_refused"] == 1 and result.details["accepted"] == 1
    assert [s["process"] for s in result.details["stale_rejected"]] == [0]  # for the matrix
    assert "process 0" in result.summary and "no token and no lease" in result.summary


def test_two_accepted_writes_on_one_version_are_invalid() -> None:
    result = guarded.check_record(RunRecord(history("ok")))
    assert result.valid is False
    assert result.details["duplicates"][0]["processes"] == [1, 0]
    assert [s["process"] for s in result.details["stale_accepted"]] == [0]
    assert "processes 1" in result.summary and "3" in result.summary


def test_a_late_write_of_unknown_outcome_proves_no_duplicate() -> None:
    result = guarded.check_record(RunRecord(history("info")))
    assert result.valid is True and result.details["unknown"] == 1


def test_no_accepted_write_proves_nothing() -> None:
    ops = [
        Op(0, S, 0, "invoke", "write"),
        Op(1, 2 * S, 0, "fail", "write", {"name": "c", "basis": 0}, error=f"{REJECTED}: x"),
    ]
    assert guarded.check_record(RunRecord(History(ops))).valid == "unknown"
