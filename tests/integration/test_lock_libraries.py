"""Lock libraries and locks of one's own on Redis (issue 32): the example package of
docs/example-lock installed as a package and run as ``--lock example`` (CI's one run), and
each library at its pinned version in its own environment (nightly: one short run each).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHORT = ("--target", "redis", "--time-limit", "5", "--recovery-time", "0", "--nemesis", "none")

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _harness(out: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )
    return proc.returncode, proc.stdout + proc.stderr


def _recorded(out: Path) -> tuple[dict, dict]:
    run_dir = out / "latest"
    test = json.loads((run_dir / "test.json").read_text())
    return test, json.loads((run_dir / "results.json").read_text())


def test_the_example_package_installs_and_runs_as_its_entry_point(tmp_path: Path) -> None:
    source = shutil.copytree(ROOT / "docs" / "example-lock", tmp_path / "example-lock")
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
    subprocess.run([*pip, str(source)], check=True, capture_output=True, timeout=300)
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    code, said = _harness(tmp_path / "o", "--lock", "example", *SHORT, env={"PYTHONPATH": path})
    assert code == 0, said
    test, results = _recorded(tmp_path / "o")
    assert test["lock_library"]["origin"] == "entry point"
    assert test["lock_library"]["make"] == "example_lock:make"
    assert results["checkers"]["mutex"]["valid"] is True
    grants = [op for op in _ops(tmp_path / "o") if op["f"] == "acquire" and op["type"] == "ok"]
    assert len(grants) >= 3 and all(op["value"]["token"] is None for op in grants)


def _ops(out: Path) -> list[dict]:
    lines = (out / "latest" / "history.jsonl").read_text().splitlines()
    return [op for op in map(json.loads, lines) if op["process"] != "nemesis"]


@pytest.mark.nightly
@pytest.mark.parametrize("lock", ["redis-py", "python-redis-lock", "pottery-redlock"])
def test_each_library_runs_at_its_pinned_version_from_its_own_environment(
    tmp_path: Path, lock: str
) -> None:
    from workloads.libraries.library_registry import LIBRARIES

    code, said = _harness(tmp_path / "o", "--lock", lock, *SHORT)
    assert code == 0, said
    test, results = _recorded(tmp_path / "o")
    lib = test["lock_library"]
    assert (lib["library"], lib["version"]) == (lock, LIBRARIES[lock].version)
    assert Path(lib["interpreter"]).is_file() and test["versions"][f"{lock} library"]
    assert results["checkers"]["mutex"]["valid"] is True
    assert len([op for op in _ops(tmp_path / "o") if op["f"] == "write"]) >= 3
