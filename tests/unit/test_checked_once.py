"""A run's options are checked and decided once (issue 31): ``harness.validate.check_run``
gives the one value ``harness.orchestrate.run_test`` runs, which decides nothing again
(before, the orchestration decided the workload's defaults a second time). The run
records the harness's version from the package's metadata (issue 31's small debts)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from test_cli import recorded_run

from core.options import RunOptions
from harness import validate
from harness.orchestrate import PACKAGE
from harness.validate import Checked, check_run
from workloads.ids import IdsOptions


@pytest.mark.slow
def test_a_run_decides_its_options_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decided: list[RunOptions] = []
    fit = validate.fit_defaults

    def counted(opts: RunOptions, *rest: Any) -> RunOptions:
        decided.append(opts)
        return fit(opts, *rest)

    monkeypatch.setattr(validate, "fit_defaults", counted)
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
