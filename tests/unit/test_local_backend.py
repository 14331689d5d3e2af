"""The local-process backend (``clusters._local``): any ServerSpec as processes of this
machine, each node with its own port and folder, nothing written outside the run
directory or through a link, every process it started ended by ``stop``."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from clusters._local import LocalCluster, local_cluster
from clusters.server import Launch, Peer, Place
from clusters.sim.local import SERVER, SimServer
from core.cluster import ClusterError
from core.writes import WriteRefused
from harness.cli import main


@dataclass(frozen=True)
class Written(SimServer):
    """The sim's server, with a file of its own to write at launch (``path``)."""

    path: str = "conf/peers.txt"

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        base = super().launch(node, peers, place)
        at = self.path if self.path.startswith("/") else f"{place.conf}/{self.path}"
        peers_line = " ".join(f"{p.name}={p.ip}:{p.port}" for p in peers)
        return replace(base, files={at: peers_line + "\n"})


THREE = Written(node_names=(), default_nodes=3)
"""Three sim servers named n1..n3: a cluster whose nodes share one host."""


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def test_nodes_share_a_host_each_on_its_own_port_and_folder(tmp_path: Path) -> None:
    cluster = local_cluster(THREE)
    try:
        cluster.start(tmp_path)
        assert cluster.nodes() == ["n1", "n2", "n3"] and cluster.is_ready()
        ends = cluster.endpoints()
        assert len(set(ends.values())) == 3 and all(
            e.startswith("127.0.0.1:") for e in ends.values()
        )
        said = (tmp_path / "n2" / "conf" / "peers.txt").read_text().split()
        assert said == [f"{n}={e}" for n, e in ends.items()], "each peer knows every port"
        for node in cluster.nodes():
            assert (tmp_path / node / "events.jsonl").exists(), "its files in its folder"
        pids = [p.pid for p in cluster._procs.values()]
        cluster.kill("n2")
        assert not cluster.is_running("n2") and cluster.is_healthy("n1")
        cluster.restart("n2")
        cluster.wait_healthy("n2", 10)
        assert cluster.endpoints() == ends, "a restart comes back on its port"
        pids += [cluster._procs["n2"].pid]
        cluster.pause("n3")
        assert cluster.is_paused("n3") and not cluster.is_paused("n1")
        cluster.collect_logs(tmp_path / "nodes")
        assert (tmp_path / "nodes" / "n3" / "conf" / "peers.txt").exists()
        assert "starting" in (tmp_path / "nodes" / "n1" / "server.log").read_text()
    finally:
        cluster.stop()
    assert not any(alive(pid) for pid in pids), "stop ends every process, a paused one too"
    cluster.stop()  # twice is fine


def test_exec_is_refused_in_one_line(tmp_path: Path) -> None:
    cluster = local_cluster(SERVER)
    with pytest.raises(ClusterError, match="process of this machine, not a host") as e:
        cluster.exec("sim", ["iptables", "-L"])
    assert "\n" not in str(e.value)
    assert cluster.version() == "built-in"


def test_a_launch_writing_outside_its_folder_is_refused(tmp_path: Path) -> None:
    cluster = local_cluster(Written(path="/etc/harness-was-here"))
    try:
        with pytest.raises(ClusterError, match="outside node sim's folder"):
            cluster.start(tmp_path / "run")
    finally:
        cluster.stop()
    assert not Path("/etc/harness-was-here").exists()


def test_a_link_in_place_of_a_node_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(elsewhere, run / "sim")
    cluster = local_cluster(Written())
    try:
        with pytest.raises(WriteRefused):
            cluster.start(run)
    finally:
        cluster.stop()
    assert list(elsewhere.iterdir()) == []


def test_a_node_that_ended_on_its_own_is_said_at_the_stop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The stop says in each node's log how its process ended: one the harness killed
    and did not restart, one that ended on its own (a warning too), one still running."""
    cluster = local_cluster(THREE)
    try:
        cluster.start(tmp_path)
        cluster.kill("n1")
        os.kill(cluster._procs["n2"].pid, signal.SIGKILL)  # a crash, not the harness
        cluster._procs["n2"].wait(10)
    finally:
        cluster.stop()
    last = {n: (tmp_path / n / "server.log").read_text().splitlines()[-1] for n in cluster.nodes()}
    assert "had ended (signal SIGKILL) before the stop" in last["n1"]
    assert last["n2"].endswith("and the harness had not killed it"), last["n2"]
    assert last["n3"].endswith(": it ran until the stop"), last["n3"]
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        f"sim node n2 {last['n2'].removeprefix('=== harness: ')}"
    ]


def test_a_node_count_the_spec_cannot_name_is_one_line() -> None:
    with pytest.raises(ClusterError, match=r"sim runs 1 node.*not 3: leave out --nodes"):
        LocalCluster(SERVER, nodes=3)


def test_a_sim_run_on_the_local_backend_keeps_its_files_and_proves_its_kill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``harness run --nemesis kill``: the sim's node, ``sim``, in ``run_dir/sim/`` (its
    service log where test.json says), killed (gone) and restarted on its port, whose
    write-ahead log it replayed; restarted from the nemesis thread, it ran until the
    cluster's stop (it was SIGKILLed when that thread ended: ``test_procutil``)."""
    code = main(["run", "--nemesis", "kill", "--time-limit", "4", "-o", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    run = tmp_path / "latest"
    test = json.loads((run / "test.json").read_text())
    assert test["nodes"] == ["sim"] and test["versions"]["sim"] == "built-in"
    assert test["service_log"] == "sim/events.jsonl" and (run / "sim" / "events.jsonl").exists()
    assert (run / "sim" / "wal.jsonl").stat().st_size > 0
    faults = [json.loads(line) for line in (run / "history.jsonl").open() if "nemesis" in line]
    done = [f["value"] for f in faults if f["type"] == "ok"]
    assert [d["proof"] for d in done][:2] == [{"sim": True}] * 2, "gone, then back"
    log = (run / "nodes" / "sim" / "server.log").read_text()
    ports = [line for line in log.splitlines() if line.isdigit()]
    assert log.count("=== harness: starting") == 2 and len(set(ports)) == 1, log
    own = (run / "sim" / "server.log").read_text().splitlines()  # written on at the stop
    assert own[-1].endswith(": it ran until the stop"), own[-3:]
    assert "had ended" not in (run / "harness.log").read_text()


def test_a_relative_output_folder_reaches_the_server_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o out`` (relative, as the installed command's smoke suite gives it): a node's
    process runs in its own folder, so the paths it is given must not be relative to
    where the harness was started (it once wrote under ``run_dir/sim/out/...``, which did
    not exist, and the sim server exited during start)."""
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--nemesis", "none", "--time-limit", "2", "-o", "out"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    run = tmp_path / "out" / "latest"
    assert (run / "sim" / "events.jsonl").exists()
    assert not (run / "sim" / "out").exists()
