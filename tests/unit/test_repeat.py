"""Repeats (``harness run --repeat N``, a suite entry's ``repeat = N``): the same scenario
with N seeds, the rate k/N invalid, the seeds, the first failing run, the pass rule that
decides the exit code; ``--replay RUN --repeat N``: how often the anomaly comes back."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.repeat import Rate, Repeated, seeds

SIM = ["--target", "sim", "--workload", "cas-register", "--nemesis", "none"]
SHORT = ["--time-limit", "1", "--recovery-time", "0", "--concurrency", "2"]
SOMETIMES = [*SIM, *SHORT, "--sim-bug", "stale-read", "--rate", "5"]
"""A stale read the sim's bug makes only now and then: few reads, in one second."""
ALWAYS = [*SIM, *SHORT, "--sim-bug", "stale-read", "--rate", "40"]
"""The same bug with eight times the reads: it shows in every run."""


def _rate(*verdicts: object, rule: str = "all") -> Rate:
    runs = tuple(Repeated(seed, v, f"/r/{seed}") for seed, v in enumerate(verdicts))
    return Rate(runs, len(verdicts), rule)


@pytest.mark.parametrize(
    ("verdicts", "rule", "code"),
    [
        ((True, True, True), "all", 0),
        ((True, False, True), "all", 1),
        ((True, False, True), "most", 0),
        ((True, False, False), "most", 1),
        ((True, True, False, False), "most", 1),  # half is not most
        ((False, False, True), "any", 0),
        ((False, False, False), "any", 1),
        ((True, "unknown", "unknown"), "most", 2),  # not passed, and no run invalid
    ],
)
def test_the_pass_rule_decides_the_exit_code(verdicts: tuple, rule: str, code: int) -> None:
    assert _rate(*verdicts, rule=rule).exit_code() == code


def test_a_run_not_made_counts_as_not_valid() -> None:
    """Two valid runs of three asked for: an interrupted repeat does not pass ``all``."""
    rate = Rate((Repeated(1, True), Repeated(2, True)), 3, "all")
    assert not rate.passed() and rate.rate() == "0/3 invalid, 2 ran"


def test_seeds_follow_the_first_or_repeat_it() -> None:
    assert seeds(7, 3) == [7, 8, 9]
    assert seeds(7, 3, "same") == [7, 7, 7]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--pass-rule", "any"], "--pass-rule shapes the runs of --repeat N"),
        (["--repeat-seed", "same"], "--repeat-seed shapes the runs of --repeat N"),
        (["--repeat", "0"], "must be at least 1"),
        (["--repeat", "2", "--pass-rule", "half"], "invalid choice"),
    ],
)
def test_repeat_flags_refused_in_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    try:
        code = main(["run", *argv, "-o", str(tmp_path)])
    except SystemExit as e:  # argparse's own refusals
        code = int(str(e.code))
    assert code == 254
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())  # nothing ran


def _runs(out: Path) -> list[Path]:
    """The run directories directly below ``out`` (not its ``latest`` links)."""
    return [p.parent for p in out.glob("*/*/results.json") if not p.parent.is_symlink()]


def _said_rate(out: str) -> tuple[int, int]:
    found = re.search(r"^repeat: (\d+)/(\d+) invalid", out, re.M)
    assert found, out
    return int(found[1]), int(found[2])


@pytest.mark.slow
def test_repeat_5_of_a_sometimes_failing_scenario_prints_its_rate_and_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Done when of issue 33: k/5 and the seeds, each run in its own directory, the
    summary in repeat.json agreeing with each run's own results, the exit code the pass
    rule's; ``harness compare`` then gives the rate, not one verdict."""
    out = tmp_path / "out"
    code = main(["run", "--repeat", "5", *SOMETIMES, "--seed", "1", "-o", str(out)])
    said = capsys.readouterr().out
    k, n = _said_rate(said)
    (summary,) = out.glob("repeat-*/*/repeat.json")
    repeat = json.loads(summary.read_text())
    runs = repeat["runs"]
    assert n == 5 and [r["seed"] for r in runs] == [1, 2, 3, 4, 5]
    verdicts = [json.loads((Path(r["run_dir"]) / "results.json").read_text()) for r in runs]
    invalid = [r["seed"] for r, v in zip(runs, verdicts, strict=True) if v["valid"] is False]
    assert k == len(invalid) == repeat["invalid"]
    assert len({r["run_dir"] for r in runs}) == 5  # each run in its own directory
    assert all(Path(r["run_dir"]).parent.parent == summary.parent for r in runs)
    assert "seeds: 1 " in said and ", 5 " in said
    assert code == (1 if invalid else 0) == repeat["exit_code"]  # pass rule all
    if invalid:
        assert f"first failing run: seed {invalid[0]}" in said
        assert repeat["first_failing"] == runs[invalid[0] - 1]["run_dir"]
    test = json.loads((Path(runs[2]["run_dir"]) / "test.json").read_text())
    assert test["repeat"]["index"] == 3 and test["repeat"]["of"] == 5 and test["seed"] == 3
    assert main(["compare", str(out), "--json"]) == 0
    (cell,) = json.loads(capsys.readouterr().out)["cells"]
    assert cell["rate"].startswith(f"{k}/5 invalid")


@pytest.mark.slow
def test_a_suite_entry_with_repeat_is_one_junit_case_with_its_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs each: a scenario that always fails passes ``expect = "invalid"`` under
    ``any`` (no run valid) and fails ``expect = "valid"`` under ``any``; one that never
    fails meets ``valid`` under ``all``. Each entry is one test case whose message gives
    its rate."""
    suite = tmp_path / "rates.toml"
    suite.write_text(
        '[suite]\nname = "rates"\n[defaults]\ntarget = "sim"\nworkload = "cas-register"\n'
        'nemesis = ["none"]\ntime_limit = 1\nrecovery_time = 0\nconcurrency = 2\nseed = 1\n'
        '[[run]]\nname = "clean"\nrepeat = 2\npass_rule = "all"\n'
        '[[run]]\nname = "buggy"\nsim_bugs = ["stale-read"]\nrate = 40\nrepeat = 2\n'
        'pass_rule = "any"\nexpect = "invalid"\nviolation = "stale-read"\n'
        '[[run]]\nname = "buggy-hoped-valid"\nsim_bugs = ["stale-read"]\nrate = 40\n'
        'repeat = 2\npass_rule = "any"\nrepeat_seed = "same"\n'
    )
    code = main(["suite", "run", str(suite), "-o", str(tmp_path / "out")])
    capsys.readouterr()
    assert code == 1  # one entry did not meet its expectation
    (junit,) = (tmp_path / "out").rglob("junit.xml")
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"clean", "buggy", "buggy-hoped-valid"}  # one case per entry
    assert cases["clean"].find("failure") is None
    assert cases["buggy"].find("failure") is None
    failure = cases["buggy-hoped-valid"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("2/2 invalid, pass rule any: expected valid")
    suite_json = json.loads(next((tmp_path / "out").rglob("suite.json")).read_text())
    rates = {o["name"]: o["repeat"] for o in suite_json["outcomes"]}
    assert rates["clean"]["rate"] == "0/2 invalid" and rates["buggy"]["invalid"] == 2
    assert rates["buggy-hoped-valid"]["seeds"] == [1, 1]


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ("repeat = 0\n", "repeat must be at least 1"),
        ('pass_rule = "any"\n', "pass_rule and repeat_seed shape repeat = N"),
        ('repeat = 2\npass_rule = "half"\n', "pass_rule must be one of all, most, any"),
    ],
)
def test_a_suite_s_repeat_refused_in_one_line(
    lines: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "bad.toml"
    suite.write_text(f'[suite]\nname = "bad"\n[[run]]\nname = "one"\n{lines}')
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "out")]) == 254
    err = capsys.readouterr().err
    assert said in err and "run 'one'" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_replay_repeat_counts_how_often_the_recorded_anomaly_comes_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["run", *ALWAYS, "--seed", "3", "-o", str(out)]) == 1
    capsys.readouterr()
    (recorded,) = _runs(out)
    code = main(["run", "--replay", str(recorded), "--repeat", "2", "-o", str(out), "--json"])
    answer = json.loads(capsys.readouterr().out)
    kinds = set(answer["reproduce"])
    assert kinds and kinds <= {"stale-read", "lost-update", "non-linearizable"}
    found = [bool(kinds & set(r["anomalies"])) for r in answer["runs"]]
    assert answer["reproduced"] == sum(found) and answer["seeds"] == [3, 3]
    assert code == (0 if answer["valid"] == 2 else 1)


@pytest.mark.slow
def test_replay_repeat_of_a_run_without_an_anomaly_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *SIM, *SHORT, "--rate", "5", "-o", str(tmp_path / "r")]) == 0
    (run,) = _runs(tmp_path / "r")
    capsys.readouterr()
    assert main(["run", "--replay", str(run), "--repeat", "2", "-o", str(tmp_path / "o")]) == 254
    err = capsys.readouterr().err
    assert "no anomaly to reproduce" in err and len(err.strip().splitlines()) == 1, err


def test_a_repeat_folder_that_is_a_link_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing is written through a symbolic link: not repeat.json, not a run."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "repeat-sim-cas-register-no-fault").symlink_to(elsewhere)
    assert main(["run", "--repeat", "2", *SIM, "-o", str(out)]) == 254
    err = capsys.readouterr().err
    assert "symbolic link" in err and len(err.strip().splitlines()) == 1, err
    assert not list(elsewhere.iterdir())
