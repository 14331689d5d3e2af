"""A shrink's memory bound (issue 33): out of the check's memory (``--memory-limit``), the
shrink of a lock run's violation and of a non-linearizable history stop where they are and
keep the smallest failing candidate they saw, said not minimal and why, still confirmed;
never a smaller story nobody saw fail. The memory a shrink takes is made to run out by
reporting the process bigger than its limit once the shrink has checked a few candidates
(``core.formats.budget.memory_in_use``, which every budget reads)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import checkers.linear.shrink as linear_shrink
import checkers.mutex as mutex_module
import core.formats.budget as budget_module
from checkers import mutex
from checkers.ddmin import bound
from checkers.shrink_holdings import shows, signature
from harness.analysis import load_record
from harness.cli import main
from tests.support.synthetic import lock_run
from tests.unit.test_shrink import STALE, _edn
from tests.unit.test_shrink_holdings import _again

LIMIT = 4 << 30
"""The memory limit the checks are given (4,096 MiB)."""


def _runs_out_after(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, checks: int) -> None:
    """Memory runs out once ``module.name`` (a shrink) has polled it ``checks`` times."""
    real = budget_module.memory_in_use
    polled = {"on": False, "n": 0}

    def in_use() -> tuple[int, int]:
        rss, vsz = real()
        if polled["on"]:
            polled["n"] += 1
            if polled["n"] > checks:
                return LIMIT + (1 << 20), vsz
        return rss, vsz

    shrink: Callable[..., Any] = getattr(module, name)

    def shrinking(*args: Any, **kwargs: Any) -> Any:
        polled["on"] = True
        try:
            return shrink(*args, **kwargs)
        finally:
            polled["on"] = False

    monkeypatch.setattr(budget_module, "memory_in_use", in_use)
    monkeypatch.setattr(module, name, shrinking)


def test_a_shrink_without_a_budget_keeps_to_half_the_memory_available(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # MemAvailable moves between two reads on a busy machine: it is read once here
    monkeypatch.setattr(budget_module, "_meminfo_text", lambda: "MemAvailable: 2048 kB\n")
    b = bound(None)
    assert b.memory_limit == budget_module.default_memory_limit() == 1024 * 1024
    assert b.time_limit is None


def test_the_holdings_shrink_out_of_memory_keeps_what_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = lock_run(tmp_path / "run", fencing=False, duration_s=30.0)
    _runs_out_after(monkeypatch, mutex_module, "shrink_result", 3)
    out = tmp_path / "out"
    assert main(["check", str(run), "--memory-limit", str(LIMIT), "--out", str(out)]) == 1
    capsys.readouterr()
    (results,) = out.rglob("results.json")
    r = json.loads(results.read_text())["checkers"]["mutex"]
    shrunk = r["shrunk"]
    assert shrunk["minimal"] is False
    assert shrunk["not_minimal"] == (
        "not minimal (out of the memory limit (4,096 MiB) while shrinking the counterexample;"
        " raise --memory-limit)"
    )
    assert shrunk["checks"] == 3  # the candidates checked before it ran out
    assert shrunk["holdings"] <= shrunk["of_holdings"] and shrunk["writes"] >= 1
    # what it kept still shows the violation, by the checker alone
    again = mutex.judged(_again(load_record(run), shrunk))
    assert shows(again, signature(r["named_anomalies"][0])) is not None


def test_the_linearizability_shrink_out_of_memory_keeps_what_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "stale.edn", tmp_path / "out.edn"
    src.write_text(_edn(STALE))
    _runs_out_after(monkeypatch, linear_shrink, "shrink", 2)
    argv = ["check", str(src), "--memory-limit", str(LIMIT), "--shrink", str(out)]
    assert main(argv) == 1
    said = capsys.readouterr().out
    assert (
        "not minimal (out of the memory limit (4,096 MiB) while shrinking the counterexample;"
        " raise --memory-limit)" in said
    ), said
    monkeypatch.undo()
    assert main(["check", str(out)]) == 1  # what was kept cannot be ordered either
    capsys.readouterr()


@pytest.mark.slow
def test_a_sim_runs_stale_read_shrinks_to_two_operations_that_check_again_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cas-register run's linearizability shrink, end to end: the run's results carry
    the fewest operations of the failing key, confirmed by the plain search, and
    ``harness check RUN --shrink OUT`` writes them where ``harness check OUT`` (in the
    run's model) says invalid again."""
    argv = ["run", "--workload", "cas-register", "--sim-bug", "stale-read", "--nemesis", "none"]
    argv += ["--time-limit", "5", "--recovery-time", "0", "--rate", "20", "--seed", "1"]
    assert main([*argv, "--stop-on-anomaly", "-o", str(tmp_path / "runs")]) == 1
    run = (tmp_path / "runs" / "latest").resolve()
    shrunk = json.loads((run / "results.json").read_text())["checkers"]["linearizability"]
    shrunk = shrunk["shrunk"]
    assert shrunk["operations"] == 2 and shrunk["minimal"], shrunk
    assert shrunk["confirmed_by"] == "the plain search"
    out = tmp_path / "shrunk.jsonl"
    check = ["check", str(run), "--shrink", str(out), "--out", str(tmp_path / "again")]
    assert main(check) == 1
    assert "shrunk: 2 of " in capsys.readouterr().out
    assert main(["check", "--model", "register", str(out)]) == 1
