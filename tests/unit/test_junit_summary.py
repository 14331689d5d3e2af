"""A suite's JUnit carries each failed run's one-sentence reason and report; ``harness
junit-summary`` turns JUnit files into the Markdown table of a CI job's summary; suites and
documents are found by name."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.junit_summary import markdown
from harness.packaged import doc_file, suite_file, suite_names
from harness.report._junit import write_junit
from harness.suite import Outcome, load_suite
from tests.unit.test_suite import GOOD as SUITE

REASON = "Valid: mutual-exclusion: the stale write of process 0 was rejected."


def _junit(tmp_path: Path) -> Path:
    (tmp_path / "s.toml").write_text(SUITE)
    fenced, unfenced = load_suite(tmp_path / "s.toml").runs
    run_dir = tmp_path / "unfenced-run"
    run_dir.mkdir()
    (run_dir / "report.html").write_text("<html></html>")
    outcomes = [
        Outcome(fenced, valid=True, met=True, why="valid, as expected", run_dir=None),
        Outcome(
            unfenced,
            valid=True,
            met=False,
            why="expected invalid, got valid",
            run_dir=str(run_dir),
            reason=REASON,
            seconds=12.5,
        ),
    ]
    return write_junit([o.junit_case("t") for o in outcomes], tmp_path / "junit.xml", suite="t")


def test_a_failed_run_carries_its_reason_and_report(tmp_path: Path) -> None:
    root = ET.parse(_junit(tmp_path)).getroot()
    (failure,) = root.iter("failure")
    assert failure.get("message") == f"expected invalid, got valid. {REASON}"
    assert f"report: {tmp_path / 'unfenced-run' / 'report.html'}" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["verdict"] == "valid"
    assert props["report"] == str(tmp_path / "unfenced-run" / "report.html")


def test_the_summary_is_a_table_with_the_reason_of_each_failure(tmp_path: Path) -> None:
    text = markdown([_junit(tmp_path)])
    lines = text.splitlines()
    assert lines[0] == "### t: 1 of 2 as expected"
    (fenced,) = (line for line in lines if line.startswith("| fenced "))
    assert "| valid | yes |" in fenced
    (unfenced,) = (line for line in lines if line.startswith("| unfenced "))
    assert "| valid | **no** | 12.5 |" in unfenced
    assert REASON in unfenced and "report.html" in unfenced


def test_pytest_junit_too(tmp_path: Path) -> None:
    (tmp_path / "p.xml").write_text(
        '<testsuites><testsuite name="pytest"><testcase classname="tests.a" name="test_x" '
        'time="0.5"><failure message="assert 1 == 2">long | trace</failure></testcase>'
        '<testcase classname="tests.a" name="test_y" time="0.1"><skipped message="no docker"/>'
        "</testcase></testsuite></testsuites>"
    )
    text = markdown([tmp_path / "p.xml"])
    assert "| tests.a.test_x | failure | **no** | 0.5 | assert 1 == 2 |" in text
    assert "| tests.a.test_y | skipped | yes |" in text


def test_the_command_appends_to_a_file_and_refuses_what_is_not_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = _junit(tmp_path)
    out = tmp_path / "summary.md"
    out.write_text("before\n")
    assert main(["junit-summary", str(tmp_path / "*.xml"), "--out", str(out)]) == 0
    assert out.read_text().startswith("before\n### t: 1 of 2")
    (tmp_path / "bad.xml").write_text("<html/>")
    assert main(["junit-summary", str(junit), str(tmp_path / "bad.xml")]) == 254
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a JUnit XML file" in err


def test_suites_and_documents_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # away from the checkout's suites/
    assert {"smoke", "sim", "locks", "nightly"} <= set(suite_names())
    assert load_suite(suite_file("smoke")).name == "smoke"
    assert suite_file("nope") == Path("nope")  # the caller's "no such suite file"
    assert suite_file("x/smoke") == Path("x/smoke")  # a path stays a path
    (tmp_path / "smoke").write_text(SUITE)
    assert suite_file("smoke") == Path("smoke")  # a file of that name comes first
    ssh = doc_file("ssh")
    assert ssh is not None and ssh.read_text().startswith("# Real hosts over SSH")
    assert doc_file("nope") is None


def test_an_unknown_suite_name_is_one_line_pointing_at_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["suite", "run", "nope", "--list"]) == 254
    err = capsys.readouterr().err
    assert (
        err
        == "harness: nope: no such suite file (the shipped suites, by name: harness suite list)\n"
    )
