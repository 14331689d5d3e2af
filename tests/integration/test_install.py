"""The harness as a new user gets it: a non-editable ``pip install`` of the checkout into
a fresh virtualenv, then, from an empty directory, ``harness --version``, the smoke suite's
sim runs by name, a shipped document, and bash completion of the installed command.

Slow (a minute or two: the install resolves the dependencies), no Docker needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clusters.target_registry import TARGETS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LEFT_OUT = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".cache",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "results",
    "build",
    "*.egg-info",
    "__pycache__",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` directory of a fresh virtualenv holding a non-editable install of a
    copy of the checkout (copied, so the build leaves nothing in the checkout)."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    shutil.rmtree(source)  # the installed copy must not need the checkout
    return venv / "bin"


def _run(
    bin_dir: Path, cwd: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_version_from_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    out = _run(installed, tmp_path, "harness", "--version")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "harness 0.1.0"
    assert lines[1].startswith(f"Python {sys.version_info.major}.{sys.version_info.minor}")
    assert lines[2].startswith("linearizability checker: ")
    assert str(installed.parent) in lines[1]  # the venv's interpreter


def test_the_smoke_suite_by_name(installed: Path, tmp_path: Path) -> None:
    listed = _run(installed, tmp_path, "harness", "suite", "list")
    assert listed.returncode == 0 and "smoke" in listed.stdout and "nightly" in listed.stdout
    out = _run(
        installed,
        tmp_path,
        "harness",
        "suite",
        "run",
        "smoke",
        "--only",
        "sim-lock-unfenced",
        "-o",
        "out",
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (junit,) = tmp_path.glob("out/suite-smoke/*/junit.xml")
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    smoke = tomllib.loads((ROOT / "suites" / "smoke.toml").read_text())
    assert "sim-lock-unfenced" in {r["name"] for r in smoke["run"]}
    # One run found by the suite's name, an invalid run that meets its expectation
    # (test_suites.py runs the whole suite).
    assert set(cases) == {"sim-lock-unfenced"}
    assert not any(c.find("failure") is not None for c in cases.values())


def test_a_document_help_points_at(installed: Path, tmp_path: Path) -> None:
    helped = _run(installed, tmp_path, "harness", "run", "--help")
    assert "`harness docs ssh`" in helped.stdout
    path = _run(installed, tmp_path, "harness", "docs", "ssh", "--path").stdout.strip()
    assert str(installed.parent) in path and Path(path).read_text().startswith("# Real hosts")


def test_bash_completion_of_the_installed_command(installed: Path, tmp_path: Path) -> None:
    probe = (
        'source <(harness completion bash); COMP_WORDS=(harness run --target ""); '
        'COMP_CWORD=3; _harness_complete; echo "${COMPREPLY[*]}"; '
        "COMP_WORDS=(harness suite run sm); COMP_CWORD=3; _harness_complete; "
        'echo "${COMPREPLY[*]}"; complete -p harness'
    )
    out = _run(installed, tmp_path, "bash", "--norc", "-c", probe)
    assert out.returncode == 0, out.stderr
    targets, suites, registered = out.stdout.splitlines()
    assert targets.split() == list(TARGETS)
    assert "smoke" in suites.split()
    assert registered.endswith("_harness_complete harness")
