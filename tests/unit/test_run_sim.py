"""End to end on the built-in sim target, through the real `harness` command: real worker
processes, a real sim server and protected resource, real SIGSTOP.

Short timings keep these at a few seconds each; the defaults (TTL 10 s, keepalive 3 s,
pause at 12 s for 14 s) are the same scenario at full length.
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

from core.procutil import is_stopped

pytestmark = pytest.mark.slow

SHORT = [
    "--lease-ttl",
    "2",
    "--keepalive",
    "0.5",
    "--pause-at",
    "1.5",
    "--pause-for",
    "4",
    "--time-limit",
    "7",
    "--recovery-time",
    "1",
    "--work-time",
    "0.1",
    "--acquire-wait",
    "1",
    "--seed",
    "7",
]


def harness(*args: str, out: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )  # type: ignore[call-overload]


def results(out: Path) -> dict:
    return json.loads((out / "latest" / "results.json").read_text())


def test_stale_write_is_rejected_with_fencing_and_the_run_is_valid(tmp_path: Path) -> None:
    r = harness("run", *SHORT, "--fencing", "on", out=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    mutex = results(tmp_path)["checkers"]["mutex"]
    assert mutex["stale_rejected"], "the paused holder's late write should reach the resource"
    assert not mutex["stale_accepted"]
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["linearizable_locks"] is True  # the target's fact, recorded at the start
    assert (tmp_path / "latest" / test["service_log"]).is_file()  # where its service logged
    assert test["options"]["target"] == "sim"  # the default target, named
    assert "mutex-linearizability" in results(tmp_path)["checkers"]


def test_stale_write_is_accepted_without_fencing_and_the_run_is_invalid(tmp_path: Path) -> None:
    r = harness("run", *SHORT, "--fencing", "off", out=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    mutex = results(tmp_path)["checkers"]["mutex"]
    assert mutex["stale_accepted"]
    assert "danger window" in mutex["summary"]


def test_an_injected_sim_bug_is_caught(tmp_path: Path) -> None:
    args = [
        "--nemesis",
        "none",
        "--time-limit",
        "4",
        "--recovery-time",
        "0",
        "--lease-ttl",
        "2",
        "--keepalive",
        "0.5",
        "--work-time",
        "0.3",
        "--acquire-wait",
        "1",
        "--seed",
        "3",
    ]
    good = harness("run", *args, out=tmp_path / "good")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = harness("run", *args, "--sim-bug", "lock-ignores-lease", out=tmp_path / "bad")
    assert bad.returncode == 1, bad.stdout + bad.stderr


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc), so a test can see they are gone later."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def _wait_for(pred, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def _fault_started(out: Path) -> bool:
    """The client pause is in effect: the nemesis recorded its start as ok."""
    h = out / "latest" / "history.jsonl"
    return h.exists() and any(
        '"process":"nemesis"' in line and '"type":"ok"' in line and "start-" in line
        for line in h.read_text().splitlines()
    )


def _alive(pids: list[int]) -> list[int]:
    return [
        p
        for p in pids
        if Path(f"/proc/{p}").exists()
        and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    ]


def test_kill_9_mid_run_leaves_a_history_that_check_reads(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            *SHORT,
            "--time-limit",
            "30",
            "-o",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: _fault_started(tmp_path))
        kids = _children(proc.pid)
        assert kids, "the run should have worker, sim and resource processes"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    try:
        _wait_for(lambda: not _alive(kids), timeout=10)
    except AssertionError:
        left = {
            k: Path(f"/proc/{k}/cmdline").read_text().replace("\0", " ")[:80] for k in _alive(kids)
        }
        raise AssertionError(f"processes outlived the harness: {left}") from None
    run_dir = (tmp_path / "latest").resolve()
    r = subprocess.run(
        [sys.executable, "-m", "harness.cli", "check", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert (run_dir / "results.json").exists()
    assert len((run_dir / "history.jsonl").read_text().splitlines()) > 5


def test_ctrl_c_mid_fault_heals_and_still_checks(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            *SHORT,
            "--pause-for",
            "20",
            "--time-limit",
            "30",
            "-o",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(lambda: _fault_started(tmp_path))
        kids = _children(proc.pid)
        assert any(is_stopped(k) for k in kids), "a client should be frozen mid-fault"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted" in out
    assert proc.returncode in (1, 2), out
    _wait_for(lambda: not _alive(kids), timeout=10)  # workers, sim server, resource: gone
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["status"] == "interrupted"
    assert (tmp_path / "latest" / "results.json").exists()
