"""A non-editable ``pip install`` compiles the search (setup.py's build hook) where a C
compiler and Python's headers exist, and ``harness check`` then runs it: a fresh virtual
environment under a temporary directory, the checkout's sources copied there, installed
without dependencies (checking a history file needs none), run from outside the checkout.
Takes about a minute (mypyc); marked slow, and CI runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("HARNESS_REQUIRE_COMPILED") == "1"
SOURCES = ("pyproject.toml", "setup.py", "README.md", "core", "checkers", "workloads")
SOURCES += ("clusters", "nemesis", "harness")


def _can_compile() -> bool:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which(compiler) is not None and headers.exists()


@pytest.mark.slow
def test_a_pip_install_runs_the_compiled_search(tmp_path: Path) -> None:
    if not _can_compile() and not REQUIRED:
        pytest.skip("no C compiler or Python headers here: the install is plain Python")
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so")
            )
        else:
            shutil.copy(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HARNESS_PURE_PYTHON")}
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--no-cache-dir", str(src)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    # The one dependency a check needs (ops are msgspec structs), at this venv's version.
    msgspec = f"msgspec=={version('msgspec')}"
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", msgspec],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    history = tmp_path / "history.jsonl"
    ops = [(0, "invoke", "write", 1), (0, "ok", "write", 1), (1, "invoke", "read", None)]
    ops += [(1, "ok", "read", 2)]  # a stale read: invalid
    history.write_text(
        "".join(
            json.dumps({"index": i, "time": i, "process": p, "type": t, "f": f, "value": v}) + "\n"
            for i, (p, t, f, v) in enumerate(ops)
        )
    )
    run = subprocess.run(
        [str(venv / "bin" / "harness"), "check", "--json", "--model", "register", str(history)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # not the checkout: the installed copy runs
        timeout=120,
    )
    out = json.loads(run.stdout.splitlines()[-1])
    assert (run.returncode, out["valid"], out["search"]) == (1, False, "compiled"), run.stderr
    modules = (
        "checkers.linear.search",
        "checkers.linear._registers",
        "core.formats._scan",
        "core.formats._edn",
    )
    where = f"import importlib\nfor m in {modules!r}: print(importlib.import_module(m).__file__)"
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", where],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    assert len(installed) == len(modules), installed  # the mypyc search and the C modules
    assert all(f.startswith(str(venv)) and f.endswith(".so") for f in installed), installed
