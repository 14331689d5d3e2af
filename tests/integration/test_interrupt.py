"""Ctrl-C in the middle of a fault on a real cluster: the run heals, tears down, checks."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusters._docker import LABEL, connect

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _fault_active(out: Path) -> bool:
    h = out / "latest" / "history.jsonl"
    if not h.exists():
        return False
    lines = h.read_text().splitlines()
    return any('"process":"nemesis"' in ln and '"type":"ok"' in ln and "start-" in ln
               for ln in lines)


def _ours() -> set[str]:
    client = connect()
    return {c.name for c in client.containers.list(all=True, filters={"label": f"{LABEL}=1"})}


def test_sigint_mid_partition_and_pause_heals_and_removes_the_cluster(tmp_path: Path) -> None:
    before = _ours()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "--target", "redis", "--workload",
         "cas-register", "--nemesis", "pause,clock", "--nemesis-interval", "2",
         "--time-limit", "60", "-o", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not _fault_active(tmp_path):
            assert time.monotonic() < deadline, "no fault started"
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.2)
        during = _ours() - before
        assert during, "the run's containers exist mid-fault"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted" in out, out[-3000:]
    assert "could not heal" not in out and "Traceback" not in out, out[-3000:]
    assert not (_ours() - before), "the interrupted run left containers behind"
    run_dir = (tmp_path / "latest").resolve()
    assert json.loads((run_dir / "test.json").read_text())["status"] == "interrupted"
    assert (run_dir / "results.json").exists()
    log = (run_dir / "harness.log").read_text()
    assert "teardown complete" in log
