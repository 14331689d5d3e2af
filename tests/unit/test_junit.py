"""JUnit XML: one testcase per run, failure when the verdict differs from the expected one,
error when there is no verdict, the summary as the message."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.cli import main
from harness.report import write_junit
from harness.report._junit import Case
from tests.support.synthetic import cas_register_run, demo_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("results"))


def test_invalid_runs_fail_and_valid_ones_pass(runs: dict[str, Path], tmp_path: Path) -> None:
    out = write_junit(runs.values(), tmp_path / "junit.xml")
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "2", "0")
    failures = [c for c in root.iter("testcase") if c.find("failure") is not None]
    messages = [c.find("failure").get("message", "") for c in failures]  # type: ignore[union-attr]
    assert any("stale read" in m for m in messages)
    assert any("accepted" in m for m in messages)
    assert all(
        f.find("failure").get("type") == "invalid (expected valid)"  # type: ignore[union-attr]
        for f in failures
    )


def test_an_expected_invalid_run_passes(runs: dict[str, Path], tmp_path: Path) -> None:
    stale = runs["cas-stale-read"]
    out = write_junit(
        [stale, runs["cas-valid"]],
        tmp_path / "j.xml",
        expect={str(stale): False, "sim-cas-register-partition": False},
    )
    outcomes = {
        c.get("classname", "") + ":" + str(c.get("name")).split("/")[1]: [
            child.tag for child in c if child.tag in ("failure", "error")
        ]
        for c in ET.parse(out).getroot().iter("testcase")
    }
    assert outcomes == {
        f"harness.sim.cas-register:{stale.name}": [],  # expected invalid, found invalid
        f"harness.sim.cas-register:{runs['cas-valid'].name}": ["failure"],  # expected a bug
    }


def test_a_folder_stands_for_every_run_below_it(runs: dict[str, Path], tmp_path: Path) -> None:
    root = ET.parse(write_junit([runs["cas-valid"].parents[1]], tmp_path / "j.xml")).getroot()
    assert len(list(root.iter("testcase"))) == 4


def test_a_run_without_verdict_is_an_error(tmp_path: Path) -> None:
    run = cas_register_run(tmp_path / "r" / "20260101T000000", ops=50, faults=0)
    root = ET.parse(write_junit([run], tmp_path / "j.xml")).getroot()
    err = next(root.iter("testcase")).find("error")
    assert err is not None and "Not checked" in err.get("message", "")


def test_suites_pass_their_own_cases(tmp_path: Path) -> None:
    cases = [
        Case("bug-found", "suite.sim", False, expected=False, summary="found it"),
        Case("timed-out", "suite.sim", "unknown", summary="checker ran out of time"),
        Case("regressed", "suite.sim", False, summary="Invalid: lost update"),
    ]
    root = ET.parse(write_junit(cases, tmp_path / "j.xml", suite="nightly")).getroot()
    assert root.get("name") == "nightly"
    got = {c.get("name"): [child.tag for child in c] for c in root.iter("testcase")}
    assert got == {"bug-found": [], "timed-out": ["error"], "regressed": ["failure"]}
    regressed = next(c for c in root.iter("testcase") if c.get("name") == "regressed")
    assert regressed.find("failure").get("message") == "Invalid: lost update"  # type: ignore[union-attr]


def _start(el: ET.Element) -> datetime:
    """A testcase's ``started`` property, parsed."""
    found = [p.get("value") for p in el.iter("property") if p.get("name") == "started"]
    assert len(found) == 1 and found[0] is not None, ET.tostring(el)
    return datetime.fromisoformat(found[0])


@pytest.mark.slow
def test_a_suite_s_junit_says_when_it_and_each_run_began_in_utc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28: the timestamp was the suite's end (``datetime.now()`` as the file was
    written), in local time without a zone."""
    suite = tmp_path / "two.toml"
    suite.write_text(
        '[suite]\nname = "two"\n[defaults]\ntarget = "sim"\nworkload = "cas-register"\n'
        'nemesis = ["none"]\ntime_limit = 3\nrecovery_time = 0\n'
        '[[run]]\nname = "first"\n[[run]]\nname = "second"\n'
    )
    before = datetime.now(UTC).replace(microsecond=0)
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "out")]) == 0, capsys.readouterr()
    after = datetime.now(UTC)
    (junit,) = (tmp_path / "out").rglob("junit.xml")
    ts = ET.parse(junit).getroot().find("testsuite")
    assert ts is not None
    stamp = ts.get("timestamp", "")
    assert stamp.endswith("+00:00"), stamp  # UTC, with its zone
    began = datetime.fromisoformat(stamp)
    first, second = (_start(c) for c in ts.iter("testcase"))
    assert before <= began <= first < second <= after
    # the start, not the end: both runs (3 s of work each) came after it
    assert (after - began).total_seconds() >= 6, (stamp, after)


def test_runs_given_as_directories_start_at_their_own_time(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    root = ET.parse(write_junit([runs["lock-fenced"]], tmp_path / "j.xml")).getroot()
    ts, case = root.find("testsuite"), next(root.iter("testcase"))
    assert ts is not None
    # the run directory's stamp (20260101T000000, local time) in UTC, the suite's too
    expected = datetime(2026, 1, 1).astimezone(UTC)
    assert _start(case) == expected
    assert datetime.fromisoformat(ts.get("timestamp", "")) == expected
