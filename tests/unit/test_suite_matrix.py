"""The workflow users copy to run a suite over many machines (suite-matrix.yml): the
plan's matrix is what its jobs read (actionlint, given the matrix written in, checks
every ``matrix.*`` the jobs name), its shard jobs install what any suite's faults need,
and the nightly runs through it."""

from __future__ import annotations

import io
import json
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from harness.cli import main
from nemesis.fault_registry import FAULTS
from tests.unit.test_workflow_packages import installed, jobs
from tests.unit.test_workflows import WORKFLOWS, _actionlint

MATRIX_LINE = "      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}\n"


def _plan_github(suite: str, shards: int) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["suite", "plan", suite, "--shards", str(shards), "--format", "github"]) == 0
    text = out.getvalue()
    assert text.count("\n") == 1  # one line, for $GITHUB_OUTPUT
    return text.strip()


def _lint_with_matrix(tmp_path: Path, matrix: str) -> subprocess.CompletedProcess[str]:
    tool = _actionlint()
    if tool is None:
        pytest.skip("actionlint is not installed (pip install -e '.[dev]')")
    workflow = (WORKFLOWS / "suite-matrix.yml").read_text()
    assert workflow.count(MATRIX_LINE) == 1
    written = tmp_path / ".github" / "workflows" / "suite-matrix.yml"
    written.parent.mkdir(parents=True)
    written.write_text(workflow.replace(MATRIX_LINE, f"      matrix: {matrix}\n"))
    return subprocess.run(
        [tool, "-no-color", str(written)], capture_output=True, text=True, timeout=120
    )


def test_the_nightly_plan_is_a_matrix_the_workflow_accepts(tmp_path: Path) -> None:
    """``harness suite plan nightly --shards 8 --format github`` in place of the plan
    job's output: actionlint checks the jobs' every ``matrix.*`` against it."""
    matrix = _plan_github("nightly", 8)
    assert len(json.loads(matrix)["include"]) == 8
    out = _lint_with_matrix(tmp_path, matrix)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_matrix_without_what_the_jobs_read_is_refused(tmp_path: Path) -> None:
    """The check can fail: a matrix without ``index`` (the artifacts' names) is caught."""
    matrix = json.loads(_plan_github("smoke", 2))
    for entry in matrix["include"]:
        del entry["index"]
    out = _lint_with_matrix(tmp_path, json.dumps(matrix))
    assert out.returncode == 1 and "index" in out.stdout, out.stdout


def test_each_shard_installs_what_any_suite_s_faults_need() -> None:
    """The suite is the workflow's input: its shard job installs every package a fault
    declares (harness.host_packages), not only one suite's."""
    workflow = (WORKFLOWS / "suite-matrix.yml").read_text()
    declared = {p for f in FAULTS.values() for p in f.packages}
    assert declared and declared <= installed(jobs(workflow)["shard"])


def test_the_nightly_runs_through_the_matrix_workflow() -> None:
    nightly = (WORKFLOWS / "nightly.yml").read_text()
    assert "uses: ./.github/workflows/suite-matrix.yml" in nightly
    assert "suite: nightly" in nightly and "shards: 8" in nightly
    matrix = (WORKFLOWS / "suite-matrix.yml").read_text()
    for step in (
        "harness suite plan",
        'harness suite run "$SUITE" --shard "$SHARD" ${DURATIONS:+--durations "$DURATIONS"}',
        "harness merge shards/* --out merged",
        "actions/upload-artifact",
        "actions/download-artifact",
    ):
        assert step in matrix, step
