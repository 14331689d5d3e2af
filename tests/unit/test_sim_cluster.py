"""The sim's server on the local-process backend: lifecycle, protocol, pause, kill and restart."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clusters._local import LocalCluster
from clusters.sim.client import LeaseNotFound, NoAnswer, NotSent, Rejected, SimClient
from clusters.sim.local import sim_cluster
from core.cluster import Cluster, ClusterError, Killable, Pausable
from core.run_clock import RunClock
from core.store import read_jsonl
from workloads.common.service import EPHEMERAL_RANGE


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = sim_cluster(RunClock())
    try:
        cluster.start(tmp_path)
        yield cluster
    finally:
        cluster.stop()


def client(cluster: LocalCluster, timeout: float = 2.0) -> SimClient:
    return SimClient(cluster.endpoints()["sim"], timeout=timeout)


def test_implements_the_cluster_protocols(sim: LocalCluster) -> None:
    assert isinstance(sim, Cluster) and isinstance(sim, Pausable) and isinstance(sim, Killable)
    assert sim.nodes() == ["sim"]
    assert sim.endpoints()["sim"].startswith("127.0.0.1:")
    with pytest.raises(ClusterError, match="No node 'n2' in the sim cluster; nodes: sim"):
        sim.pause("n2")


def test_lock_protocol_over_tcp_and_event_log(sim: LocalCluster, tmp_path: Path) -> None:
    a, b = client(sim), client(sim)
    la, lb = a.grant_lease(5), b.grant_lease(5)
    t1 = a.acquire("l", la, wait=1)
    with pytest.raises(Rejected, match="not granted"):
        b.acquire("l", lb, wait=0.1)
    got: list[int] = []
    waiter = threading.Thread(target=lambda: got.append(b.acquire("l", lb, wait=5)))
    waiter.start()
    assert a.keepalive(la) == 5
    a.release("l", la)
    waiter.join(5)
    assert got and got[0] > t1
    assert b.holder("l") == (lb, got[0])
    b.revoke(lb)
    with pytest.raises(LeaseNotFound):
        b.keepalive(lb)
    assert b.holder("l") == (None, None)
    a.close()
    b.close()

    sim.collect_logs(tmp_path / "nodes")
    events = list(read_jsonl(tmp_path / "sim" / "events.jsonl"))  # the service_log
    grants = [e for e in events if e["event"] == "lock-granted"]
    assert [g["token"] for g in grants] == [t1, got[0]]
    assert all(isinstance(e["time"], int) for e in events)
    assert (tmp_path / "nodes" / "sim" / "server.log").exists()


def test_elections_and_registers_over_tcp(sim: LocalCluster) -> None:
    c = client(sim)
    lease = c.grant_lease(5)
    epoch = c.campaign("e", lease, "me", wait=1)
    assert c.observe("e") == ("me", epoch)
    c.resign("e", lease)
    assert c.observe("e")[0] is None
    c.write("k", 1)
    c.cas("k", 1, 2)
    with pytest.raises(Rejected, match="cas mismatch"):
        c.cas("k", 1, 3)
    assert c.read("k") == 2
    with pytest.raises(Rejected, match="unknown op"):
        c.call("no_such_op")
    c.close()


def test_pause_makes_requests_indeterminate_until_resumed(sim: LocalCluster) -> None:
    c = client(sim, timeout=0.3)
    c.write("k", 1)
    sim.pause("sim")
    try:
        assert sim.is_paused("sim")
        with pytest.raises(NoAnswer):
            c.read("k")
    finally:
        sim.resume("sim")
    assert not sim.is_paused("sim")
    assert c.read("k") == 1
    c.close()


def test_kill_refuses_connections_and_restart_keeps_state(sim: LocalCluster) -> None:
    c = client(sim)
    address = sim.endpoints()["sim"]
    lease = c.grant_lease(30)
    token = c.acquire("l", lease, wait=1)
    c.write("k", 1)
    sim.kill("sim")
    assert not sim.is_running("sim")  # the kill fault's proof
    # No request is answered once the kill is proven, and within a second every one is
    # refused. Not at once: the old connection's close may reach the client after the
    # proof (2 of 10 runs at load 8 on 7db6cd3), and in CI a second, new connection was
    # once accepted and then reset (a listener still there after the proof: unexplained).
    deadline = time.monotonic() + 1.0
    while True:
        try:
            c.read("k")
        except NotSent:
            break
        except NoAnswer:
            assert time.monotonic() < deadline, "connections still accepted 1 s after the kill"
        else:
            raise AssertionError("a killed server answered")
    sim.restart("sim")
    sim.wait_healthy("sim", 5)
    assert sim.is_running("sim")
    assert sim.endpoints()["sim"] == address  # clients keep their address
    # below the ephemeral range: no port-0 bind or outgoing connection takes it while down
    assert int(address.rpartition(":")[2]) < int(EPHEMERAL_RANGE.read_text().split()[0])
    assert c.read("k") == 1  # replayed from the write-ahead log
    assert c.holder("l") == (lease, token)
    assert c.keepalive(lease) == 30
    c.close()


def test_forget_on_restart_bug_restarts_empty(tmp_path: Path) -> None:
    cluster = sim_cluster(RunClock(), ["forget-on-restart"])
    try:
        cluster.start(tmp_path)
        c = client(cluster)
        lease = c.grant_lease(30)
        c.write("k", 1)
        cluster.kill("sim")
        cluster.restart("sim")
        cluster.wait_healthy("sim", 5)
        assert c.read("k") is None  # no persistence
        with pytest.raises(LeaseNotFound):
            c.keepalive(lease)
        c.close()
    finally:
        cluster.stop()


def test_bugs_are_passed_to_the_server(tmp_path: Path) -> None:
    cluster = sim_cluster(RunClock(), ["token-reuse"])
    try:
        cluster.start(tmp_path)
        c = client(cluster)
        lease = c.grant_lease(5)
        t1 = c.acquire("l", lease, 1)
        c.release("l", lease)
        assert c.acquire("l", lease, 1) == t1
        c.close()
    finally:
        cluster.stop()
    cluster.stop()  # twice is fine


def test_unknown_bug_is_refused_before_starting() -> None:
    with pytest.raises(ValueError, match="lock-ignores-lease"):
        sim_cluster(RunClock(), ["typo"])
    r = subprocess.run(
        [sys.executable, "-m", "clusters.sim.server", "--clock-origin", "0", "--bug", "typo"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "unknown sim bug" in r.stderr


def test_stop_before_start_is_harmless() -> None:
    sim_cluster(RunClock()).stop()
