"""Availability counts a refusal by design as answered (issue 28: a sim cas-register run
with no fault showed 84.9 % available, its CAS mismatches counted as outages; version-cas
67 %).

The designed refusals are one table (``checkers.refusals``); the checker's availability
and the report's read it from the history's errors; the clients spell these errors only
through its constants, and a client that could not reach the service never borrows them.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from test_mutex_records import run_record

from checkers import stats
from checkers.refusals import DESIGNED_REFUSALS, refusal_of, refused_by_design
from checkers.windows import record_windows
from core.history import History
from core.ops import Op, OpType
from harness.cli import main
from harness.report._metrics import op_stats

ROOT = Path(__file__).resolve().parents[2]
MS = 1_000_000


def _history(
    *completions: tuple[OpType, str | None], fault: tuple[int, int] | None = None
) -> History:
    """One client op per completion ``(type, error)``, 10 ms apart, 1 ms long; a
    partition over the ops from ``fault[0]`` to ``fault[1]`` (their indexes)."""
    ops: list[Op] = []
    for i, (kind, error) in enumerate(completions):
        if fault is not None and i == fault[0]:
            ops.append(Op(len(ops), i * 10 * MS - 2 * MS, "nemesis", "invoke", "start-partition"))
            ops.append(Op(len(ops), i * 10 * MS - MS, "nemesis", "ok", "start-partition"))
        ops.append(Op(len(ops), i * 10 * MS, i, "invoke", "cas", [1, 2], key=0))
        ops.append(Op(len(ops), i * 10 * MS + MS, i, kind, "cas", [1, 2], key=0, error=error))
        if fault is not None and i == fault[1]:
            ops.append(Op(len(ops), i * 10 * MS + 2 * MS, "nemesis", "invoke", "stop-partition"))
            ops.append(Op(len(ops), i * 10 * MS + 3 * MS, "nemesis", "ok", "stop-partition"))
    return History(ops)


@pytest.mark.parametrize(
    ("error", "refusal"),
    [
        ("cas mismatch: value is 15, not 10", "cas mismatch"),
        ("not granted", "not granted"),
        ("not granted: lock-0 held by another for 5 s", "not granted"),
        ("not elected", "not elected"),
        ("rejected: stale token", "rejected: stale token"),
        ("rejected by the data: cell-0 is no longer at version 3", "rejected by the data"),
        ("cannot connect to 127.0.0.1:1: [Errno 111] Connection refused", None),
        ("no answer from 127.0.0.1:5 within 5 s", None),
        ("unavailable: no quorum", None),
        ("lease not found", "lease not found"),
        ("lease not found: release of lock-0: the lease had expired", "lease not found"),
        ("lease lost", None),  # the client's own conclusion, no answer of the service
        ("not grantedx", None),  # a prefix only counts as a whole word
        (None, None),
    ],
)
def test_the_table_reads_the_designed_refusals_and_nothing_else(
    error: str | None, refusal: str | None
) -> None:
    assert refusal_of(error) == refusal


def test_an_answered_refusal_is_available_an_unreachable_service_is_not() -> None:
    h = _history(
        ("ok", None),
        ("fail", "cas mismatch: value is 3, not 1"),
        ("fail", "cas mismatch: value is 4, not 1"),
        ("fail", "cannot connect to 127.0.0.1:1: refused"),  # for lack of the service
        ("info", "no answer within 5 s"),
        ("ok", None),
    )
    r = stats.check_record(run_record([], h))
    out = r.details["availability"]["outside"]
    # the keys results.json always had, and the designed refusals counted beside them
    assert out == {"ok_ops": 2, "refused_ops": 2, "completed_ops": 6, "availability": 0.666667}
    assert "6 client operations completed, 2 ok, 2 refused by design (answered)" in r.summary
    assert "outside faults: 67% available" in r.summary
    # the report's numbers agree with the checker's
    s = op_stats(h, record_windows(run_record([], h)))
    assert s.refused == 2 and s.availability_clear == pytest.approx(4 / 6)


def test_a_refusal_inside_a_fault_window_is_answered_too() -> None:
    h = _history(
        ("ok", None),
        ("fail", "not granted: lock-0 held by another for 5 s"),
        ("fail", "unavailable: no quorum"),
        ("ok", None),
        fault=(1, 2),
    )
    r = stats.check_record(run_record([], h))
    (w,) = r.details["availability"]["windows"]
    assert (w["ok_ops"], w["refused_ops"], w["completed_ops"], w["availability"]) == (0, 1, 2, 0.5)
    s = op_stats(h, record_windows(run_record([], h)))
    assert s.availability_in_fault == 0.5 and s.availability_clear == 1.0
    # proof that a fault took effect still asks for an ok: a refusal proves no write
    assert r.valid != True  # noqa: E712 (unknown, not valid)


def test_every_target_s_lost_lease_reads_as_the_service_s_answer() -> None:
    """A release whose lease expired got the service's answer, whatever the driver said."""
    from workloads.common.lease import LeaseNotFound

    etcd = LeaseNotFound("release of lock-0: the lease had expired, and its lock key with it")
    assert refusal_of(str(etcd)) == "lease not found" and "lock key" in str(etcd)
    assert str(LeaseNotFound("lease not found")) == "lease not found"  # the sim's own words


def test_only_a_fail_can_be_a_designed_refusal() -> None:
    info = Op(1, 1, 0, "info", "cas", error="cas mismatch: but the answer was lost")
    assert not refused_by_design(info) and not refused_by_design(None)


def _literals(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_clients_spell_the_refusals_only_through_the_table() -> None:
    """A client that wrote "cas mismatch" by hand could drift from the table unseen."""
    found = []
    for package in ("workloads", "clusters"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, text in _literals(ast.parse(path.read_text(encoding="utf-8"))):
                if refusal_of(text.strip()) is not None or text.strip() in DESIGNED_REFUSALS:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert found == [], "spell these with checkers.refusals' constants:\n" + "\n".join(found)


def test_a_zookeeper_lock_says_not_granted_only_when_the_wait_ran_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kazoo.exceptions import ConnectionClosedError, LockTimeout

    import clusters.zookeeper.lock as zk_lock
    from workloads.errors import OpFailed

    raised: list[Exception] = []

    class FakeLock:
        node = None

        def __init__(self, *args: Any) -> None:
            pass

        def acquire(self, timeout: float) -> bool:
            raise raised[0]

        def cancel(self) -> None:
            pass

    monkeypatch.setattr(zk_lock, "Lock", FakeLock)
    recipe = zk_lock.ZkRecipe(["127.0.0.1:1"])
    monkeypatch.setattr(recipe, "client", lambda lease: object())
    raised[:] = [LockTimeout("Failed to acquire lock on /l after 0.1 seconds")]
    with pytest.raises(OpFailed) as held:
        recipe.take("l", 1, 0.1)
    assert refusal_of(str(held.value)) == "not granted", held.value
    raised[:] = [ConnectionClosedError("Connection has been closed")]
    with pytest.raises(OpFailed) as closed:
        recipe.take("l", 1, 0.1)
    assert refusal_of(str(closed.value)) is None and "not sent" in str(closed.value)


def test_a_postgres_lock_says_not_granted_only_for_lock_not_available() -> None:
    from clusters.postgres.errors import Refused
    from clusters.postgres.locks import _not_granted
    from workloads.errors import Unreachable

    held = _not_granted(Refused("acquire l: LockNotAvailable [55P03]: lock timeout", "55P03"))
    assert refusal_of(str(held)) == "not granted"
    down = Unreachable("connect to n1: connection refused (not sent)")
    assert _not_granted(down) is down and refusal_of(str(down)) is None
    lost = Refused("acquire l: DeadlockDetected [40P01]: deadlock", "40P01")
    assert _not_granted(lost) is lost


@pytest.mark.slow
def test_a_sim_cas_register_run_with_no_fault_is_fully_available(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduction: with no fault, every CAS mismatch is the register's answer."""
    args = ["run", "--workload", "cas-register", "--nemesis", "none", "--time-limit", "4"]
    assert main([*args, "-o", str(tmp_path)]) == 0, capsys.readouterr()
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    out = results["checkers"]["stats"]["availability"]["outside"]
    assert out["refused_ops"] > 0, out  # the run did meet CAS mismatches
    assert out["availability"] >= 0.99, out
    assert out["ok_ops"] + out["refused_ops"] <= out["completed_ops"]
