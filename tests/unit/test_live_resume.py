"""The run's final linearizability check starts from what the check during the run proved
(issue 33): each key from its last cut (``checkers.linear.resume``), never a verdict the
whole search would not give."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from checkers import linearizability
from checkers.linear.models import get_model
from checkers.linear.resume import Cut, advance, latest_cut, proven_from
from checkers.record import RunRecord
from core.history import History
from core.ops import Op, OpType
from core.run_clock import RunClock
from harness.cli import main
from harness.live_check import LiveCheck


def _history(rng: random.Random, n: int, values: int) -> list[Op]:
    """A random history of ``n`` operations on one register by three processes (an op of
    each process may overlap the others'), with few values so that some cannot be ordered."""
    ops: list[Op] = []
    open_: dict[int, Op] = {}
    count = 0
    while count < n or open_:
        p = rng.randrange(3)
        if p in open_:
            inv = open_.pop(p)
            value = rng.randrange(values) if inv.f == "read" else inv.value
            kind = "fail" if inv.f == "cas" and rng.random() < 0.3 else "ok"
            ops.append(inv.with_(index=len(ops), time=len(ops), type=kind, value=value))
        elif count < n:
            count += 1
            f = rng.choice(["read", "write", "cas"])
            v = None if f == "read" else rng.randrange(values)
            value = [rng.randrange(values), v] if f == "cas" else v
            inv = Op(index=len(ops), time=len(ops), process=p, type="invoke", f=f, value=value)
            open_[p] = inv
            ops.append(inv)
    return ops


@pytest.mark.parametrize("model", ["cas-register", "register"])
def test_a_check_from_the_cuts_gives_the_verdict_of_the_whole_search(model: str) -> None:
    """Hundreds of random histories, checked during their run at random moments, then at
    the end from the cuts: the same verdict as the whole history's, every time."""
    rng = random.Random(33)
    reused = 0
    for _ in range(300):
        ops = _history(rng, rng.randrange(4, 16), 3)
        live = LiveCheck(model, RunClock())
        for op in ops:
            live.add(op)
            if rng.random() < 0.3:
                live.check_now()
            if live.first is not None:
                break
        live.check_now()
        record = RunRecord(History(ops), test={"options": {"model": model}})
        whole = linearizability.check_record(record).valid
        resumed = linearizability.check_record(replace(record, proven=live.cuts))
        assert resumed.valid == whole, (ops, live.cuts)
        reused += bool(resumed.details.get("resumed", {}).get("partitions"))
    assert reused > 20  # the cuts were used, not merely ignored


def _op(i: int, p: int, type_: OpType, f: str, value: object) -> Op:
    return Op(index=i, time=i, process=p, type=type_, f=f, value=value, key=0)


def test_a_cut_keeps_every_state_the_prefix_may_end_in_and_no_other() -> None:
    m = get_model("register")
    ops = [
        _op(0, 0, "invoke", "write", 1),
        _op(1, 0, "ok", "write", 1),
        _op(2, 0, "invoke", "write", 2),  # concurrent with the write of 3: either is last
        _op(3, 1, "invoke", "write", 3),
        _op(4, 0, "ok", "write", 2),
        _op(5, 1, "ok", "write", 3),
        _op(6, 2, "invoke", "read", None),  # open: the cut is before it
    ]
    assert latest_cut(ops) == 6

    def valid(h: History, s: float | None) -> object:
        return linearizability.check(h, m, s, explain=False, parallel=False).valid

    cut = advance(None, ops, m, valid, 5.0)
    assert cut is not None and len(cut.ops) == 6 and sorted(cut.states) == [2, 3]
    rest = [_op(7, 2, "ok", "read", 2)]
    assert proven_from(cut, [*ops, *rest], m, valid, 5.0)
    stale = [_op(7, 2, "ok", "read", 1)]  # the write of 1 was overwritten before
    assert not proven_from(cut, [*ops, *stale], m, valid, 5.0)
    changed = [ops[0].with_(value=9), *ops[1:], *rest]  # not the prefix proven
    assert not proven_from(cut, changed, m, valid, 5.0)
    info = [*ops[:6], _op(6, 2, "invoke", "write", 4), _op(7, 2, "info", "write", 4)]
    assert latest_cut(info, 6) is None  # an unknown outcome: no cut after it
    assert proven_from(Cut(tuple(ops[:6]), (2, 3)), info, m, valid, 5.0)


def test_a_sim_run_is_checked_at_its_end_from_its_cuts_and_later_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--workload", "cas-register", "--keys", "1", "--nemesis", "none"]
    argv += ["--time-limit", "2", "--recovery-time", "0", "--concurrency", "6", "--seed", "2"]
    assert main([*argv, "-o", str(tmp_path / "runs")]) == 0
    run = (tmp_path / "runs" / "latest").resolve()
    at_run = json.loads((run / "results.json").read_text())["checkers"]["linearizability"]
    assert at_run["valid"] is True and at_run["resumed"]["partitions"] == 1
    assert at_run["resumed"]["searched"] < at_run["resumed"]["ops"]
    assert "from where the check during the run had proven them" in capsys.readouterr().out
    assert main(["check", str(run), "--out", str(tmp_path / "again")]) == 0
    (again,) = (tmp_path / "again").rglob("results.json")
    later = json.loads(again.read_text())["checkers"]["linearizability"]
    assert later["valid"] is True and "resumed" not in later
