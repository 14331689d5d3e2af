"""Stop signals in the middle of a fault: the run heals, tears down, checks what was
recorded, and says it was interrupted (verdict, exit code, results.json, report, index).

On a real cluster (Docker) and on the built-in sim (no Docker: Ctrl-C, kill, and a closed
terminal's hangup of the whole process group).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.procutil import process_state
from harness.report import write_index

pytestmark = [pytest.mark.slow]


def _fault_active(out: Path) -> bool:
    h = out / "latest" / "history.jsonl"
    if not h.exists():
        return False
    lines = h.read_text().splitlines()
    return any(
        '"process":"nemesis"' in ln and '"type":"ok"' in ln and "start-" in ln for ln in lines
    )


def _wait_for_a_fault(proc: subprocess.Popen[str], out: Path, timeout: float) -> None:
    """Until the run's history shows a fault started (the run must still be going)."""
    deadline = time.monotonic() + timeout
    while not _fault_active(out):
        assert time.monotonic() < deadline, "no fault started"
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        time.sleep(0.2)


def _ours() -> set[str]:
    from clusters._docker import LABEL, connect

    client = connect()
    return {c.name for c in client.containers.list(all=True, filters={"label": f"{LABEL}=1"})}


@pytest.mark.docker
def test_sigint_mid_partition_and_pause_heals_and_removes_the_cluster(tmp_path: Path) -> None:
    before = _ours()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--target",
            "redis",
            "--workload",
            "cas-register",
            "--nemesis",
            "pause,clock",
            "--nemesis-interval",
            "2",
            "--time-limit",
            "60",
            "-o",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for_a_fault(proc, tmp_path, 120)
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


def _descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (workers, the sim server, the resource...)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pids: set[int]) -> dict[int, str]:
    """The processes of ``pids`` still alive, with their command lines."""
    out = {}
    for p in pids:
        if process_state(p) not in (None, "Z"):
            try:
                out[p] = Path(f"/proc/{p}/cmdline").read_text().replace("\0", " ")[:200]
            except OSError:
                continue
    return out


@pytest.mark.parametrize(
    "signame,group,again",
    [
        ("SIGINT", False, False),
        ("SIGTERM", False, False),
        ("SIGHUP", True, False),
        ("SIGINT", False, True),
    ],
)
def test_a_stop_signal_mid_client_pause_on_sim_is_an_interrupted_verdict(
    tmp_path: Path, signame: str, group: bool, again: bool
) -> None:
    """SIGHUP goes to the whole process group, as a closed terminal sends it; ``again``:
    an impatient SIGTERM and Ctrl-C right after the first signal change nothing."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--time-limit",
            "30",
            "--pause-at",
            "2",
            "--pause-for",
            "20",
            "-o",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_a_fault(proc, tmp_path, 60)
        below = _descendants(proc.pid)
        assert any(process_state(p) == "T" for p in below), "the paused worker is stopped"
        sig = getattr(signal, signame)
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        if again:
            for later in (signal.SIGTERM, signal.SIGINT):
                time.sleep(0.05)
                proc.send_signal(later)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, out[-3000:]
    assert f"verdict: interrupted by {signame} at " in out, out[-3000:]
    assert "verdict: valid" not in out and "Traceback" not in out, out[-3000:]
    assert "KeyError" not in out and "resource_tracker" not in out, out[-3000:]
    deadline = time.monotonic() + 10  # the resource tracker exits when its pipe closes
    while (left := _alive(below)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"
    run_dir = (tmp_path / "latest").resolve()
    test = json.loads((run_dir / "test.json").read_text())
    assert test["status"] == "interrupted" and test["interrupted"]["signal"] == signame
    results = json.loads((run_dir / "results.json").read_text())
    assert results["verdict"] == "interrupted" and results["valid"] == "unknown"
    assert results["interrupted"]["signal"] == signame
    # what was recorded is fine, but not enough: the pause, asked for 20 s, was cut short
    # by the stop signal (the faults checker says so, and so cannot call it valid)
    checkers = results["checkers"]
    held = ("mutex", "fencing", "mutex-linearizability")  # stats: nothing ran in the window
    assert all(checkers[n]["valid"] is True for n in held), checkers
    assert "every window of client-pause was cut short" in checkers["faults"]["summary"]
    assert results["checked_valid"] == "unknown"
    report = (run_dir / "report.html").read_text()
    assert "INTERRUPTED" in report.split("</header>", 1)[0]
    index = write_index(tmp_path).read_text()
    assert "badge interrupted" in index and "1 interrupted" in index
    assert "teardown complete" in (run_dir / "harness.log").read_text()
