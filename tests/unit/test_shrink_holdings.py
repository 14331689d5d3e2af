"""Shrinking a lock run's violation (issue 33): the fewest holdings and writes that still
show the mutual-exclusion or fencing violation, confirmed by the checker, carried in
results.json as ``shrunk`` and shown first by the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checkers import election, fencing, mutex
from checkers.ddmin import ddmin
from checkers.record import RunRecord
from checkers.result import CheckResult
from checkers.shrink_holdings import shows, signature
from core.history import History
from core.ops import NEMESIS, Op
from harness.analysis import check_run, load_record
from harness.cli import main
from harness.report import write_report
from tests.support.synthetic import lock_run


def test_ddmin_keeps_only_what_the_failure_needs() -> None:
    tried: list[list[int]] = []

    def fails(units: list[int]) -> bool:
        tried.append(units)
        return {3, 11} <= set(units)

    assert ddmin(list(range(20)), fails) == [3, 11]
    assert len(tried) < 60


def _again(record: RunRecord, shrunk: dict[str, Any]) -> RunRecord:
    """The run's record with only the shrunk history and writes (faults kept)."""
    faults = [op for op in record.history if op.process == NEMESIS]
    ops = sorted([*faults, *(Op(**o) for o in shrunk["ops"])], key=lambda o: o.index)
    return replace(record, history=History(ops), resource_log=shrunk["resource_log"])


def test_a_stale_write_shrinks_to_the_two_holdings_and_the_write(tmp_path: Path) -> None:
    run = lock_run(tmp_path / "run", fencing=False, duration_s=30.0)
    results = check_run(run)
    r = results["checkers"]["mutex"]
    assert r["valid"] is False
    shrunk = r["shrunk"]
    assert (shrunk["holdings"], shrunk["writes"]) == (2, 1), shrunk
    assert shrunk["of_holdings"] > 4 and shrunk["of_writes"] > 4 and shrunk["minimal"]
    assert shrunk["kind"] == r["named_anomalies"][0]["kind"] == "stale-write-accepted"
    # checked again, by the checker alone, on what was kept
    again = mutex.judged(_again(load_record(run), shrunk))
    assert shows(again, signature(r["named_anomalies"][0])) is not None
    # the report opens on it
    page = write_report(run).read_text()
    assert 'id="shrunk"' in page and page.index('id="shrunk"') < page.index('id="figure"')
    assert "These 2 holdings and 1 write still show the stale write accepted" in page


def test_a_valid_run_has_nothing_to_shrink(tmp_path: Path) -> None:
    results = check_run(lock_run(tmp_path / "run", fencing=True))
    r = results["checkers"]["mutex"]
    assert r["valid"] is True and "shrunk" not in r and "shrunk_error" not in r


def test_another_story_is_not_the_violation() -> None:
    """The same kind with other participants (a candidate whose dropped holdings made a
    write look stale against another holder) does not count as still showing it."""
    first = {
        "kind": "stale-write-accepted",
        "involved": [{"role": "stale holder", "process": 0, "invoke_time": 5, "what": "token 4"}],
    }
    other = {**first, "involved": [{**first["involved"][0], "process": 2}]}
    result = CheckResult("mutex", False, "", {"named_anomalies": [other]})
    assert shows(result, signature(first)) is None
    assert shows(CheckResult("mutex", False, "", {"named_anomalies": [first]}), signature(first))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "checker", "kind", "lead"),
    [
        (
            ["--sim-bug", "token-reuse"],
            fencing,
            "token-reused",
            "These 2 holdings and 0 writes still show the token reuse",
        ),
        (
            ["--workload", "election", "--sim-bug", "epoch-reuse"],
            election,
            "epoch-reused",
            "These 2 leaderships and 0 writes still show the epoch reuse",
        ),
    ],
    ids=["fencing-token-reuse", "election-epoch-reuse"],
)
def test_a_reused_number_shrinks_to_the_two_grants_from_the_command_line(
    argv: list[str],
    checker: Any,
    kind: str,
    lead: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The sim's token-reuse and epoch-reuse bugs: two holdings (leaderships) that got
    the same number, no write; the election checker in its own words."""
    out = tmp_path / "out"
    run_argv = ["run", *argv, "--nemesis", "none", "--time-limit", "3", "--seed", "3"]
    assert main([*run_argv, "-o", str(out)]) == 1
    capsys.readouterr()
    run = (out / "latest").resolve()
    r = json.loads((run / "results.json").read_text())["checkers"][checker.NAME]
    shrunk = r["shrunk"]
    assert shrunk["kind"] == kind and shrunk["holdings"] == 2, shrunk
    assert shrunk["confirmed_by"] == f"the {checker.NAME} checker"
    again = checker.judged(_again(load_record(run), shrunk))
    assert shows(again, signature(r["named_anomalies"][0])) is not None
    assert lead in (run / "report.html").read_text()
