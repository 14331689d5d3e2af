"""Faults aimed at the holder, end to end on the sim target through the real command:
the runner learns each thread's node from its completions, and a server pause aimed at
``holder`` hits the node the current holder's client talks to (the sim's one node)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def test_a_pause_aimed_at_the_holder_hits_its_node(tmp_path: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--nemesis",
            "pause",
            "--nemesis-target",
            "holder",
            "--nemesis-interval",
            "2",
            "--time-limit",
            "6",
            "--recovery-time",
            "0.5",
            "--lease-ttl",
            "2",
            "--keepalive",
            "0.5",
            "--work-time",
            "0.1",
            "--acquire-wait",
            "1",
            "--seed",
            "5",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    history = [
        json.loads(line)
        for line in (tmp_path / "latest" / "history.jsonl").read_text().splitlines()
    ]
    starts = [op for op in history if op["f"] == "start-pause" and op["type"] != "invoke"]
    assert starts and all(op["type"] == "ok" for op in starts), starts
    assert all(
        op["value"]["target"] == "holder" and op["value"]["nodes"] == ["sim"] for op in starts
    )
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["options"]["nemesis_target"] == "holder"
    faults = json.loads((tmp_path / "latest" / "results.json").read_text())["checkers"]["faults"]
    assert faults["valid"] is True, faults
