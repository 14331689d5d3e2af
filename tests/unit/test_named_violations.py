"""Every violation of the lock and election checkers is named, on recorded sim runs.

Each folder under ``histories/`` is a real run of the sim with one of its bugs (the
command is in its test.json): ``harness run --time-limit 12 --recovery-time 1
--lease-ttl 2 --keepalive 0.5 --pause-at 3 --pause-for 5 --seed 5`` plus ``--sim-bug
lock-ignores-lease``, ``--sim-bug token-reuse``, ``--workload election --sim-bug
epoch-reuse`` or ``--workload election --fencing off``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from checkers.anomalies import KEY, KINDS, MAX_SENTENCE
from checkers.result import CheckResult
from harness.analysis import check_run, checkers_for, console_line

HISTORIES = Path(__file__).parent / "histories"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each recorded run checked as `harness check` would (into a copy)."""
    out = {}
    for d in sorted(HISTORIES.glob("sim-*/")):
        run_dir = tmp_path_factory.mktemp(d.name)
        shutil.copytree(d, run_dir, dirs_exist_ok=True)
        out[d.name] = check_run(run_dir)
    return out


def named(results: dict[str, Any], checker: str) -> list[dict[str, Any]]:
    r = results["checkers"][checker]
    assert r["valid"] is False, r["summary"]
    anomalies: list[dict[str, Any]] = r[KEY]
    assert len(anomalies) == len(r["violations"]), "one named anomaly per violation"
    for a in anomalies:
        assert a["kind"] in KINDS and a["sentence"].startswith(KINDS[a["kind"]])
        assert len(a["sentence"]) <= MAX_SENTENCE and a["sentence"].count(". ") <= 2
        assert a["processes"] and all(x["invoke_time"] is not None for x in a["involved"])
    if checker != "mutex-linearizability":  # its summary is its own paragraph
        assert r["summary"].split("\n\n")[0] == anomalies[0]["sentence"]
    assert console_line(r).startswith(anomalies[0]["sentence"])
    return anomalies


def test_a_lock_granted_over_a_live_lease_is_two_holders(results: dict[str, Any]) -> None:
    first, *rest = named(results["sim-lock-ignores-lease"], "mutex")
    assert {a["kind"] for a in [first, *rest]} == {"two-holders"}
    assert first["sentence"] == (
        "two holders: process 0 was granted lock-0 (token 2) at 5.396 s while process 1's "
        "lease (token 1) was still valid. Cause: the service granted the lock while the "
        "previous lease was still valid by its own account."
    )
    assert first["ops"] == [1, 0] and first["processes"] == [1, 0]
    # the owner-aware mutex check names its finding too (no register story fits a lock)
    (lin,) = named(results["sim-lock-ignores-lease"], "mutex-linearizability")
    assert lin["kind"] == "non-linearizable"


def test_a_reused_token_and_the_stale_write_it_let_through(results: dict[str, Any]) -> None:
    (token,) = named(results["sim-token-reuse"], "fencing")
    assert token["kind"] == "token-reused" and token["count"] == 32
    assert token["sentence"].startswith(
        "token reuse: process 1 got token 1 at 2.585 s, after process 0 had got token 1 at "
        "2.275 s by the service's own log."
    )
    (stale,) = named(results["sim-token-reuse"], "mutex")
    assert stale["kind"] == "stale-write-accepted" and stale["ops"] == [28, 33]
    assert [x["role"] for x in stale["involved"]] == ["stale holder", "later holder", "write"]


def test_election_names_epoch_reuse_and_a_deposed_leaders_write(
    results: dict[str, Any],
) -> None:
    kinds = [a["kind"] for a in named(results["sim-epoch-reuse"], "election")]
    assert kinds == ["epoch-reused", "deposed-write-accepted"]
    (deposed,) = named(results["sim-election-fencing-off"], "election")
    assert deposed["sentence"] == (
        "deposed leader's write accepted: the resource accepted process 1's write with epoch "
        "2 at 9.146 s, after process 2 had been granted election-0 (epoch 3) at 5.881 s. "
        "Cause: lease expired while its holder was paused."
    )


def test_a_checker_that_names_nothing_still_gets_a_kind(tmp_path: Path) -> None:
    """A violation from a checker that does not name it is kept as ``other``, in words."""

    def blunt(record: Any) -> CheckResult:
        return CheckResult("blunt", False, "Something broke. Badly. Here. And more.", {})

    shutil.copytree(HISTORIES / "sim-token-reuse", tmp_path, dirs_exist_ok=True)
    with mock.patch("harness.analysis.checkers_for", lambda *a: [*checkers_for(*a), blunt]):
        r = check_run(tmp_path)["checkers"]["blunt"]
    (a,) = r[KEY]
    assert a["kind"] == "other" and a["checker"] == "blunt"
    assert a["sentence"] == "violation: Something broke. Badly. Here."
