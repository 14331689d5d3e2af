"""Partitions shared out among worker processes: same verdicts and counterexamples as one
process, the first invalid partition stops the others, a dead worker leaves "unknown"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from checkers.linear import parallel
from checkers.linear.model import ModelError
from checkers.linear.models import get_model
from checkers.linear.prepare import problems
from checkers.linear.schedule import SKIPPED, Budget
from checkers.linear.simulate import simulate
from checkers.linearizability import check
from core.history import History

ROOT = Path(__file__).resolve().parents[2]


def keyed(n_ops: int, keys: int, corrupt: float = 0.0, seed: int = 3) -> History:
    return simulate(
        "register", n_ops, processes=6, keys=keys, values=4, p_info=0.05, corrupt=corrupt, seed=seed
    )


def test_shares_put_the_biggest_partitions_on_the_least_loaded_worker() -> None:
    assert parallel.shares([10, 1, 7, 3, 5], 2) == [[0, 3], [1, 2, 4]]  # 13 and 13
    assert parallel.shares([4, 4], 3) == [[0], [1]]  # no empty share
    assert sorted(i for share in parallel.shares(list(range(50)), 4) for i in share) == list(
        range(50)
    )


def test_one_process_unless_it_pays_and_forking_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parallel.workers_for(parallel.MIN_OPS - 1, 100) == 1
    assert parallel.workers_for(10 * parallel.MIN_OPS, 1) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert parallel.workers_for(parallel.MIN_OPS, 100) == 2
    assert parallel.workers_for(parallel.MIN_OPS, 1) == 1
    monkeypatch.setattr(threading, "active_count", lambda: 3)  # a thread could hold a lock
    assert parallel.workers_for(parallel.MIN_OPS, 100) == 1


def _outcomes(history: History, workers: int, explain: bool = True) -> list[parallel.Outcome]:
    m = get_model("register")
    return parallel.check_problems(
        problems(history, m), m, Budget(None, None, 1 << 30), explain, workers
    )


def test_workers_give_the_verdicts_of_one_process() -> None:
    history = keyed(3000, keys=12)
    outcomes = _outcomes(history, 2)
    assert len(outcomes) == 12 and all(o.result.valid is True for o in outcomes)
    serial = check(history, "register", parallel=False)
    assert serial.valid is True
    assert sum(o.ops for o in outcomes) == serial.details["ops"]


def test_an_invalid_partition_comes_back_with_its_counterexample() -> None:
    history = keyed(3000, keys=12, corrupt=0.02, seed=5)
    serial = check(history, "register", parallel=False)
    assert serial.valid is False
    outcomes = _outcomes(history, 2)
    invalid = [i for i, o in enumerate(outcomes) if o.result.valid is False]
    assert invalid, [o.result.valid for o in outcomes]
    first = outcomes[invalid[0]]
    assert first.counterexample is not None and first.counterexample["sentences"]
    # What a worker skipped, or never reported because another found an invalid one.
    others = [o.result for i, o in enumerate(outcomes) if o.result.valid == "unknown"]
    assert all(r.reason == SKIPPED for r in others)
    bare = _outcomes(history, 2, explain=False)
    assert all(o.counterexample is None for o in bare)


def test_a_worker_that_dies_leaves_its_partitions_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def die(share: list[int], conn: object) -> None:
        os._exit(3)

    monkeypatch.setattr(parallel, "_work", die)
    history = keyed(600, keys=4)
    outcomes = _outcomes(history, 2)
    probs = problems(history, get_model("register"))
    _, forked = parallel.shares([len(p.calls) for p in probs], 2)  # this process: the first
    assert [i for i, o in enumerate(outcomes) if o.result.valid is True] == [
        i for i in range(4) if i not in forked
    ]
    for i in forked:
        assert outcomes[i].result.valid == "unknown"
        assert "died (exit code 3)" in outcomes[i].result.reason


def test_what_a_worker_raises_is_raised_in_the_parent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parent = os.getpid()
    real = parallel.Solved

    def solved(*args: Any) -> Any:
        if os.getpid() != parent:  # only in the forked worker
            raise ModelError("op 7 (process 2) is 'frob', which the register model does not know")
        return real(*args)

    monkeypatch.setattr(parallel, "Solved", solved)
    with pytest.raises(ModelError, match="'frob'"):
        _outcomes(keyed(600, keys=4), 2)


def test_a_big_history_is_checked_on_both_cores(tmp_path: Path) -> None:
    """End to end, in a fresh process (no other thread): ``harness check`` of a generated
    history above ``MIN_OPS`` uses the workers and agrees with one process."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core here")
    path = tmp_path / "history.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "gen_history.py"),
            str(path),
            "--ops",
            str(parallel.MIN_OPS),
            "--keys",
            "50",
        ],
        check=True,
        capture_output=True,
    )
    code = (
        "import json, sys\n"
        "from checkers.linearizability import check\n"
        "from core.formats import read_history\n"
        "h, m = read_history(sys.argv[1])\n"
        "for p in (True, False):\n"
        "    r = check(h, m, parallel=p, register_path=False)\n"
        "    print(json.dumps([r.valid, r.details.get('workers', 1), r.details['ops']]))\n"
    )
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=True,
        text=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    ).stdout.splitlines()
    both, one = (json.loads(line) for line in out)
    assert both[0] is True and both[1] >= 2, (both, time.monotonic() - started)
    assert one == [True, 1, both[2]]
