"""A run's options are checked and decided once (issue 31): ``harness.validate.check_run``
gives the one value ``harness.orchestrate.run_test`` runs, which decides nothing again
(before, the orchestration decided the workload's defaults a second time). The run
records the harness's version from the package's metadata (issue 31's small debts)."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from test_cli import recorded_run

from clusters.spec import TargetSpec
from core.options import RunOptions
from harness import validate
from harness.cli import main
from harness.orchestrate import PACKAGE
from harness.validate import Checked, check_run
from workloads.ids import IdsOptions


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[RunOptions]:
    """The options each decision of a run's defaults was given, from now on."""
    decided: list[RunOptions] = []
    fit = validate.fit_defaults

    def counted(opts: RunOptions, *rest: Any) -> RunOptions:
        decided.append(opts)
        return fit(opts, *rest)

    monkeypatch.setattr(validate, "fit_defaults", counted)
    return decided


@pytest.mark.slow
def test_a_suite_decides_each_entry_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two entries, one of them repeated twice: two decisions, at load, none at the runs
    (before, each run was decided again when it started, each repeat too)."""
    suite = tmp_path / "once.toml"
    suite.write_text(
        '[suite]\nname = "once"\n[defaults]\nworkload = "cas-register"\ntime_limit = 1\n'
        "recovery_time = 0\nconcurrency = 2\nseed = 7\n"
        '[[run]]\nname = "one"\n[[run]]\nname = "twice"\nrepeat = 2\n'
    )
    decided = _counted(monkeypatch)
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert len(decided) == 2
    seeds = json.loads(next((tmp_path / "out").rglob("suite.json")).read_text())
    assert seeds["outcomes"][1]["repeat"]["seeds"] == [7, 8]  # each repeat its own seed


@pytest.mark.slow
def test_a_run_decides_its_options_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decided = _counted(monkeypatch)
    test = recorded_run(
        capsys, tmp_path, "--workload", "cas-register", "--time-limit", "2", "--recovery-time", "0"
    )
    assert len(decided) == 1
    assert test["options"]["workload"] == "cas-register" and test["options"]["target"] == "sim"
    # The version recorded is the package's own, from its metadata (not a constant).
    assert test["versions"]["harness"] == metadata.version(PACKAGE) != "unknown"


def test_the_checked_value_names_its_target_and_reads_only() -> None:
    checked = check_run(RunOptions.of(workload="unique-ids"))
    assert isinstance(checked, Checked) and checked.target.name == checked.options.target
    assert (
        checked.options.record(IdsOptions).generator == "counter"
    )  # the target's default, decided
    with pytest.raises(AttributeError):
        checked.options = RunOptions()  # type: ignore[misc]


@pytest.mark.slow
def test_a_repeat_decides_its_options_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run --repeat 2``: decided once, each run only given its seed and folder."""
    decided = _counted(monkeypatch)
    argv = ["run", "--workload", "cas-register", "--time-limit", "1", "--recovery-time", "0"]
    assert main([*argv, "--repeat", "2", "--seed", "3", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    assert len(decided) == 1
    (repeat,) = tmp_path.rglob("repeat.json")
    assert json.loads(repeat.read_text())["seeds"] == [3, 4]


@pytest.mark.slow
def test_a_run_checks_its_options_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The faults' aims and the target's rules are checked in the one pass before the run
    (``harness.validate``), not again while it builds its nemesis and cluster (the
    nemesis checked ``--nemesis-target`` a second time)."""
    calls: list[str] = []
    aims, rules = validate.check_nemesis_target, TargetSpec.check_options

    def aimed(opts: RunOptions) -> None:
        calls.append("aims")
        aims(opts)

    def ruled(self: TargetSpec, opts: RunOptions) -> None:
        calls.append("rules")
        rules(self, opts)

    monkeypatch.setattr(validate, "check_nemesis_target", aimed)
    monkeypatch.setattr(TargetSpec, "check_options", ruled)
    argv = ["--nemesis", "client-pause", "--nemesis-target", "holder", "--lease-ttl", "0.5"]
    recorded_run(capsys, tmp_path, *argv, "--time-limit", "3", "--recovery-time", "0")
    assert sorted(calls) == ["aims", "rules"]
