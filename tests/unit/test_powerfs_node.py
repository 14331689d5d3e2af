"""The power-loss layer on a node (``clusters._powerfs.node``) and the fault's wiring, without
Docker: a run asking for ``--nemesis power-loss`` builds its cluster with the layer, a node
gets the layer's modules and what FUSE needs, a run without the fault gets neither, and a
target without the layer refuses the fault in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import run

from clusters import docker_cluster
from clusters._powerfs import node as powerfs
from clusters.server import ClusterOptions
from clusters.target_registry import TARGETS
from core.cluster import PowerCuttable
from core.options import RunOptions
from core.run_clock import RunClock


def _redis(power_loss: bool) -> docker_cluster.DockerCluster:
    cluster = TARGETS["redis"].build(ClusterOptions(run_id="r1", power_loss=power_loss))
    assert isinstance(cluster, docker_cluster.DockerCluster)
    return cluster


def test_a_run_asking_for_power_loss_gets_the_layer_and_one_without_does_not() -> None:
    for nemesis, layer in ((["power-loss"], True), (["kill"], False)):
        opts = RunOptions.of(target="redis", workload="lock", nemesis=nemesis)
        cluster = TARGETS["redis"].make_cluster(opts, RunClock())
        assert isinstance(cluster, docker_cluster.DockerCluster)
        assert cluster.power_loss is layer


def test_a_node_with_the_layer_gets_its_modules_fuse_and_its_disk() -> None:
    with_layer, plain = _redis(True), _redis(False)
    with_layer.layout("10.9.0.0/24")
    plain.layout("10.9.0.0/24")
    assert f"{powerfs.HOME}/clusters/_powerfs/disk.py" in with_layer.files("n1")
    assert not any(p.startswith(powerfs.HOME) for p in plain.files("n1"))
    storage = with_layer._storage()
    assert storage["devices"] == ["/dev/fuse:/dev/fuse:rwm"]
    assert set(storage["cap_add"]) == {"NET_ADMIN", "SYS_ADMIN"}
    assert storage["tmpfs"] == {powerfs.BACKING: "rw,mode=755"}
    assert plain._storage() == {"cap_add": ["NET_ADMIN"], "tmpfs": {"/data": "rw,mode=755"}}


def test_the_copy_written_into_a_node_runs_on_its_own(tmp_path: Path) -> None:
    """The node has the layer's modules and nothing else of the harness."""
    for path, (text, _) in powerfs.files().items():
        dest = tmp_path / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / powerfs.HOME.lstrip("/"))}
    proc = subprocess.run(
        [sys.executable, "-m", "clusters._powerfs.mount"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
    )
    assert proc.returncode == 2 and proc.stdout.startswith("usage: mount.py serve")


def test_a_cluster_without_the_layer_refuses_a_power_cut() -> None:
    plain = _redis(False)
    assert isinstance(plain, PowerCuttable)
    with pytest.raises(Exception, match="without the power-loss layer"):
        plain.power_cut("n1")


def test_the_layer_answers_what_it_discarded_and_a_failure_names_the_node() -> None:
    def answering(node: str, cmd: list[str] | str) -> tuple[int, str]:
        assert "ctl /run/powerfs.sock cut" in str(cmd)
        return 0, '{"discarded": {"/appendonlydir/a.aof": 41}}\n'

    assert powerfs.cut(answering, "n1") == {"/appendonlydir/a.aof": 41}
    with pytest.raises(Exception, match="The power-loss layer on n1 did not answer cut"):
        powerfs.cut(lambda node, cmd: (1, "Connection refused"), "n1")


@pytest.mark.parametrize("target", ["consul", "sim"])
def test_a_target_without_the_layer_refuses_the_fault_in_one_line(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    code, out, err = run(capsys, "run", "--target", target, "--nemesis", "power-loss")
    assert code == 254 and out == ""
    assert "power-loss" in err and len(err.strip().splitlines()) == 1, err


def test_a_failed_mount_says_why_in_fuse_s_words_not_its_traceback() -> None:
    log = (
        "fusermount: mount failed: Operation not permitted\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/fuse.py", line 754, in main\n'
        "    main(**d)\n"
        "fuse.FuseError: filesystem initialization failed\n"
    )
    calls: list[str] = []

    def failing(node: str, cmd: list[str] | str) -> tuple[int, str]:
        calls.append(str(cmd))
        return (1, "") if "serve" in str(cmd) else (0, log)

    with pytest.raises(Exception) as e:
        powerfs.mount(failing, "n2", "/data")
    assert str(e.value) == (
        "The power-loss layer did not mount on n2: fusermount: mount failed: Operation not "
        "permitted | fuse.FuseError: filesystem initialization failed; "
        f"{powerfs.IN_CONTAINER.needs}"
    )
    assert powerfs.why("nohup: ignoring input\nsomething else went wrong\n") == [
        "something else went wrong"
    ]
