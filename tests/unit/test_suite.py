"""Suite files: parsing, one-line errors, and judging outcomes against expectations."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkers.anomalies import KEY
from harness.suite import SuiteError, SuiteRun, judge, load_suite, select
from workloads.common.lock_options import LockOptions

GOOD = """
[suite]
name = "t"
[defaults]
time_limit = 30
[[run]]
name = "fenced"
fencing = true
[[run]]
name = "unfenced"
fencing = false
nemesis = "client-pause"
expect = "invalid"
violation = "stale-write-accepted"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_runs_get_defaults_and_their_own_options(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, GOOD))
    assert [r.name for r in suite.runs] == ["fenced", "unfenced"]
    assert all(r.options.time_limit == 30 for r in suite.runs)
    assert suite.runs[1].options.record(LockOptions).fencing is False
    assert suite.runs[1].options.faults.nemesis == ("client-pause",)
    assert suite.runs[0].options.name == "t-fenced"
    assert [r.name for r in select(suite, "unf*")] == ["unfenced"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[run]]\nname='a'\nexpect='maybe'", "expect must be one of"),
        ("[[run]]\nname='a'\ncolour='red'", "unknown option(s) colour"),
        ("[[run]]\nname='a'\nviolation='gremlins'", "unknown violation"),
        ("[[run]]\nname='a'\n[[run]]\nname='a'", "two runs are named"),
        ("[[run]]\nname='a'\nworkload='queue'", "unknown workload"),
        ("[suite]\nname='empty'", "no [[run]] tables"),
        ("[[run]\n", "not valid TOML"),
    ],
)
def test_bad_suites_are_one_line(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(SuiteError, match=None) as e:
        load_suite(write(tmp_path, text))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_judging_needs_the_named_violation_not_just_the_verdict(tmp_path: Path) -> None:
    run = load_suite(write(tmp_path, GOOD)).runs[1]
    invalid_other = {"valid": False, "checkers": {"mutex": {"valid": False, "stale_accepted": []}}}
    met, why = judge(run, invalid_other)
    assert not met and "not because" in why
    invalid_stale = {
        "valid": False,
        "checkers": {"mutex": {"valid": False, "stale_accepted": [{"x": 1}]}},
    }
    assert judge(run, invalid_stale)[0]
    assert not judge(run, {"valid": True, "checkers": {}})[0]


def test_unknown_never_meets_a_valid_expectation(tmp_path: Path) -> None:
    run: SuiteRun = load_suite(write(tmp_path, GOOD)).runs[0]
    assert judge(run, {"valid": True})[0]
    assert not judge(run, {"valid": "unknown"})[0]


def test_an_election_run_is_judged_by_its_election_result(tmp_path: Path) -> None:
    text = (
        "[[run]]\nname='e'\nworkload='election'\nexpect='valid'\nviolation='stale-write-rejected'\n"
    )
    run = load_suite(write(tmp_path, text)).runs[0]
    fenced = {
        "valid": True,
        "checkers": {"election": {"valid": True, "stale_rejected": [{"x": 1}]}},
    }
    assert judge(run, fenced)[0]
    nobody_deposed = {
        "valid": True,
        "checkers": {"election": {"valid": True, "stale_rejected": []}},
    }
    assert not judge(run, nobody_deposed)[0]


def test_a_run_can_require_the_cause_it_is_classified_with(tmp_path: Path) -> None:
    text = (
        "[[run]]\nname='h'\nworkload='lock'\nexpect='invalid'\n"
        "violation='stale-write-accepted'\ncause='lease-expired-while-cut-off'\n"
    )
    (run,) = load_suite(write(tmp_path, text)).runs

    def results(cause: str) -> dict:  # type: ignore[type-arg]
        stale = {"classification": {"cause": cause}}
        return {"valid": False, "checkers": {"mutex": {"valid": False, "stale_accepted": [stale]}}}

    assert judge(run, results("lease-expired-while-cut-off"))[0]
    met, why = judge(run, results("service-bug"))
    assert not met and "given: service-bug" in why
    with pytest.raises(SuiteError, match="unknown cause"):
        load_suite(write(tmp_path, text.replace("cut-off'", "cut'")))


def test_a_rare_anomaly_the_service_documents_meets_an_expectation_of_either(
    tmp_path: Path,
) -> None:
    """Issue 30: ZooKeeper's sync-then-read is valid almost always, and stale now and then
    through the leader, which its documentation allows: the nightly expects either, the
    invalid one only for that stale read with that rule as its cause."""
    text = (
        "[[run]]\nname='z'\nworkload='cas-register'\nexpect=['valid', 'invalid']\n"
        "violation='stale-read'\ncause='documented-rule'\n"
    )
    (run,) = load_suite(write(tmp_path, text)).runs
    assert run.expect == "valid or invalid" and run.expected == ("valid", "invalid")

    def invalid(cause: str | None) -> dict:  # type: ignore[type-arg]
        named = [{"kind": "stale-read", **({"classification": {"cause": cause}} if cause else {})}]
        return {"valid": False, "checkers": {"linearizability": {"valid": False, KEY: named}}}

    assert judge(run, {"valid": True, "checkers": {}}) == (True, "valid, as expected")
    met, why = judge(run, invalid("documented-rule"))
    assert met and why.endswith("(documented-rule)")
    met, why = judge(run, invalid(None))
    assert not met and "given: none" in why
    assert not judge(run, invalid("unexplained"))[0]
    assert judge(run, {"valid": "unknown"}) == (False, "expected valid or invalid, got unknown")
    with pytest.raises(SuiteError, match="or a list of them"):
        load_suite(write(tmp_path, text.replace("'invalid']", "'maybe']")))
