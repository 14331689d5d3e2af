"""The smoke suite passes on real clusters (what CI runs on every change), and a suite's
outputs are all there: index, comparison matrix, JUnit XML."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def test_the_smoke_suite_meets_every_expectation(tmp_path: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "suite",
            "run",
            str(ROOT / "suites/smoke.toml"),
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    (suite_dir,) = list(tmp_path.glob("suite-smoke/*"))
    for name in ("index.html", "matrix.html", "junit.xml", "suite.json"):
        assert (suite_dir / name).exists(), name
    cases = ET.parse(suite_dir / "junit.xml").getroot().iter("testcase")
    assert all(not list(c) or c[0].tag in ("system-out", "properties") for c in cases)
