"""Replay on a real etcd cluster: a cas-register run under a paused node, replayed on a
fresh cluster, issues the same ops in the same order on each thread and the same fault
starts and stops on the same node, each within 50 ms of when it was due (its recorded time
after the first, or its thread's previous op's completion when the service answered that
later than in the recording; ``check_timing``: up to 5% of them later, within 0.5 s, on a
loaded machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.replay_check import compare, schedule

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = [
    "--target", "etcd", "--workload", "cas-register", "--nodes", "3", "--nemesis", "pause",
    "--nemesis-interval", "2", "--time-limit", "5", "--recovery-time", "1", "--rate", "30",
]  # fmt: skip


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_replay_of_an_etcd_run_reproduces_its_schedule(tmp_path: Path) -> None:
    first = _harness("run", *RUN, "-o", str(tmp_path / "a"))
    assert first.returncode in (0, 2), first.stdout[-3000:] + first.stderr[-3000:]
    original = (tmp_path / "a" / "latest").resolve()
    second = _harness("run", "--replay", str(original), "-o", str(tmp_path / "b"))
    assert second.returncode in (0, 2), second.stdout[-3000:] + second.stderr[-3000:]
    replayed = (tmp_path / "b" / "latest").resolve()
    test = json.loads((replayed / "test.json").read_text())
    assert test["replay_of"] == str(original) and test["options"]["target"] == "etcd"
    kept = compare(original, replayed, tolerance_ms=50)
    assert not kept.wrong, "\n".join(kept.wrong[:20])
    print(kept.summary())
    kept.check_timing()
    faults = [r.f for r in schedule(original)["nemesis"]]
    assert faults[:2] == ["start-pause", "stop-pause"]
