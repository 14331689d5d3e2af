"""A process the harness starts dies with the harness, and with nothing less.

``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends, not the process
(``man 2 prctl``): a sim server restarted by the nemesis thread was SIGKILLed when that
thread ended, before the cluster's teardown stopped it. Each of the three kinds of child
(a local node, a ``ServiceProcess``, a worker) is started here from a thread that then
ends, and must still be running; and a kill -9 of the process that started them from a
thread still takes them along.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from clusters._local import local_cluster
from clusters.sim.local import SERVER
from core.client import WorkerContext
from core.procutil import process_state
from core.run_clock import RunClock
from harness.worker import Worker
from tests.support.chatty import ChattyFactory
from workloads.common.service import ServiceProcess

SETTLE_S = 0.5
"""How long a child is watched after its starting thread ended (the signal is sent as
the thread exits)."""


def alive(pid: int) -> bool:
    return process_state(pid) not in (None, "Z", "X")


def in_a_thread(start: Callable[[], int]) -> int:
    """Run ``start`` in a thread of its own, let the thread end, and return the pid it
    gave once the child has had ``SETTLE_S`` to die."""
    pids: list[int] = []
    t = threading.Thread(target=lambda: pids.append(start()), name="short-lived")
    t.start()
    t.join(60)
    assert not t.is_alive() and pids, "the thread did not start its child"
    time.sleep(SETTLE_S)
    return pids[0]


def test_a_local_node_restarted_from_a_thread_outlives_the_thread(tmp_path: Path) -> None:
    """As the kill nemesis restarts the sim's node from the nemesis thread."""
    cluster = local_cluster(SERVER)
    try:
        cluster.start(tmp_path)
        cluster.kill("sim")

        def restart() -> int:
            cluster.restart("sim")
            return cluster._procs["sim"].pid

        pid = in_a_thread(restart)
        assert alive(pid) and cluster.is_running("sim"), "the node died with its thread"
        cluster.wait_healthy("sim", 10)
    finally:
        cluster.stop()
    assert not alive(pid)


def test_a_service_started_from_a_thread_outlives_the_thread(tmp_path: Path) -> None:
    args = ["--clock-origin", "0", "--log", str(tmp_path / "r.jsonl")]
    service = ServiceProcess("workloads.common.resource", args, tmp_path / "r.log")
    try:

        def start() -> int:
            service.start()
            assert service.pid is not None
            return service.pid

        pid = in_a_thread(start)
        assert alive(pid) and service.running(), "the service died with its thread"
        assert service.wait_answering(5)
    finally:
        service.stop()


def test_a_worker_spawned_from_a_thread_outlives_the_thread() -> None:
    worker: list[Worker] = []

    def spawn() -> int:
        worker.append(Worker.spawn(4, ChattyFactory(), WorkerContext(4, RunClock())))
        assert worker[0].wait_ready(30), "the worker did not start"
        return worker[0].pid

    try:
        pid = in_a_thread(spawn)
        assert alive(pid) and worker[0].running, "the worker died with its thread"
    finally:
        for w in worker:
            w.stop()


KILLED_PARENT = """
import subprocess, sys, threading, time
from core.procutil import popen_tied
pids = []
def start():
    pids.append(popen_tied([sys.executable, "-c", "import time; time.sleep(60)"]).pid)
t = threading.Thread(target=start)
t.start()
t.join()
print(pids[0], flush=True)
time.sleep(60)
"""


def test_a_kill_9_of_the_parent_takes_a_child_started_from_a_thread_along() -> None:
    """The property the harness keeps: whatever thread started it, a child dies with a
    process that is killed -9."""
    root = Path(__file__).resolve().parents[2]
    parent = subprocess.Popen(
        [sys.executable, "-c", KILLED_PARENT], cwd=root, stdout=subprocess.PIPE, text=True
    )
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        time.sleep(SETTLE_S)
        assert alive(child), "the child died with the thread that started it"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child), "the child outlived its killed parent"
    finally:
        if child and alive(child):
            os.kill(child, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def test_a_child_whose_parent_is_not_the_one_expected_exits_at_once() -> None:
    """A child whose harness died before it could ask to die with it (its parent is no
    longer the pid it was given) exits instead of running on unwatched."""
    root = Path(__file__).resolve().parents[2]
    code = "from core.procutil import die_with_parent as d; d(parent={}); print('ran on')"
    gone = subprocess.run(
        [sys.executable, "-c", code.format(1)], cwd=root, capture_output=True, text=True
    )
    assert (gone.returncode, gone.stdout) == (1, "")
    kept = subprocess.run(
        [sys.executable, "-c", code.format(os.getpid())], cwd=root, capture_output=True, text=True
    )
    assert (kept.returncode, kept.stdout) == (0, "ran on\n"), kept.stderr
