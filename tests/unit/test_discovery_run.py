"""The registry workload end to end on the sim target, the options it refuses, and the
client kill that crashes an instance."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli import run
from test_cli_options import assert_one_line_254

from core.client import Invocation
from core.run_clock import RunClock
from harness.report import write_report
from harness.report._compare import compare
from nemesis.client_kill import START, ClientKill
from workloads.holders import INSTANCE


def test_no_discovery_client_left_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("run", "--workload", "registry", "--concurrency", "3", "--instances", "3")
    assert_one_line_254(*run(capsys, *args), "--instances 3 leaves no discovery client")


class _View:
    """The least of a run a client kill looks at: one client process, no holder."""

    def __init__(self, pid: int) -> None:
        self.clock = RunClock()
        self.pid = pid

    def client_pids(self) -> dict[int, int]:
        return {7: self.pid}

    holder = INSTANCE

    def holders(self) -> list[int]:
        return []

    def working_since(self, process: int) -> int | None:
        return None

    def node_of(self, process: int) -> str | None:
        return None


def test_a_client_kill_kills_the_process_and_proves_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        kill = ClientKill(seed=1, holder_wait=0.0)
        kill.setup(_View(child.pid))
        done = kill.invoke(Invocation(START, {"target": "holder"}))
        assert done.type == "ok" and done.value["processes"] == [7], done
        assert child.wait(timeout=5) == -9
    finally:
        child.kill()


@pytest.mark.slow
def test_an_instance_paused_past_its_ttl_is_removed_then_registers_again(
    tmp_path: Path,
) -> None:
    args = [
        *("--target", "sim", "--workload", "registry", "--concurrency", "3"),
        *("--instances", "1", "--lease-ttl", "2", "--keepalive", "0.5"),
        # 8 s: well past the deadline (2.6 s)
        *("--pause-at", "2", "--pause-for", "8", "--time-limit", "11", "--recovery-time", "1"),
    ]
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = tmp_path / "latest"
    found = json.loads((run_dir / "results.json").read_text())["checkers"]["discovery"]
    (death,) = found["deaths"]
    assert death["kind"] == "paused" and death["expected_removal"], death
    assert 0 < death["detection_s"] <= found["deadline_s"], death
    assert death["reregistered_s"] is not None and death["relisted_s"] is not None, death
    page = write_report(run_dir).read_text()
    assert 'id="membership"' in page and "seen by" in page and "re-registered" in page
    (cell,) = compare([tmp_path]).cells.values()
    lines = dict(cell.lines())
    assert lines["detection"].endswith("(1 deaths)"), lines
    assert time.monotonic() - started < 100
