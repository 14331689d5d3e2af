"""The GitHub workflows pass actionlint (syntax, expressions, action versions and
inputs), and do what the README says they do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def _actionlint() -> str | None:
    here = Path(sys.executable).parent / "actionlint"  # the dev extra's wheel
    return str(here) if here.exists() else shutil.which("actionlint")


def test_the_workflows_pass_actionlint() -> None:
    tool = _actionlint()
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("actionlint is missing: make setup installs it (the dev extra)")
        pytest.skip("actionlint is not installed (pip install -e '.[dev]')")
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.name for f in files} >= {"ci.yml", "nightly.yml"}
    out = subprocess.run(
        [tool, "-no-color", *map(str, files)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_ci_runs_on_every_change_what_the_readme_says() -> None:
    ci = (WORKFLOWS / "ci.yml").read_text()
    assert "on:\n  push:\n  pull_request:\n" in ci
    for step in (
        "make lint",
        "pytest -q tests/unit",
        "pytest -q tests/browser",
        "tests/integration/test_install.py",
        "harness suite run smoke",
    ):
        assert step in ci, step
    for wf in ("ci.yml", "suite-matrix.yml"):  # the nightly runs the latter
        text = (WORKFLOWS / wf).read_text()
        assert "junit-summary" in text and '"$GITHUB_STEP_SUMMARY"' in text, wf
        assert "debian-archive-keyring" in text and "debootstrap" in text, wf
        for line in text.splitlines():  # sudo keeps CI for docker-setup.sh
            if "sudo --preserve-env" in line:
                assert "CI," in line, line


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check can fail: an unknown key and an undefined expression are refused."""
    tool = _actionlint()
    if tool is None:
        pytest.skip("actionlint is not installed")
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    step:\n"
        "      - run: echo ${{ secrets }}\n"
    )
    out = subprocess.run([tool, "-no-color", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and 'unexpected key "step"' in out.stdout, out.stdout


def test_tests_moved_out_of_ci_still_run_nightly() -> None:
    """A test marked nightly is deselected by ``make test`` (CI) and run by the nightly
    workflow's ``make nightly-tests``: moving a variant out of CI never drops it."""
    make = (ROOT / "Makefile").read_text()
    test_rule = make.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert '-m "not nightly"' in test_rule
    nightly_rule = make.split("\nnightly-tests:", 1)[1].split("\n\n", 1)[0]
    assert "-m nightly" in nightly_rule
    assert "make -s nightly-tests" in (WORKFLOWS / "nightly.yml").read_text()
