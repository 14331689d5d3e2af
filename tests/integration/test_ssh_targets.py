"""ZooKeeper, Redis and Redlock on real sshd hosts: installed over SSH, whole runs, undone.

Five ``sshhost`` containers (``sshlab``: Debian trixie with sshd and a sudo user, strict
host keys) on an internal network of their own: ZooKeeper runs on the first three, Redis
on the first, Redlock on all five. The hosts reach no mirror, so each target's .debs are
resolved and downloaded on this machine and uploaded. Each whole run is a short
``harness run`` wired as ``--ssh`` wires it, and must come out as the same options do in
Docker:

- lock, under partition, pause and kill: ZooKeeper's recipe lock with fencing is valid.
  Redis's ``set-nx`` and Redlock (under pause and kill: partitions are refused, their
  servers have no links to cut) hand out no fencing token: fencing is not applicable
  (``unknown``, left out of the verdict) and mutual exclusion alone judges the run, valid
  with these options: on the one ``redis`` server the kill comes while the pause holds
  it, after every lease has ended, so that the server forgets the lock harms no one;
  Redlock's kill empties one server of five, and the others still hold the majority;
- cas-register on ZooKeeper with ``read_mode=sync`` under partition: valid.

After each run every host is as it was: packages purged, run directory, server process,
firewall rules and staged files gone. And, as in Docker, a Redis server killed without
persistence comes back empty.

Everything created carries ``harness=1`` and this module's ``harness.run`` label and is
removed by that label at the end.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sshlab import Lab, assert_clean, ssh_lab, whole_run

from clusters.redis.server import REDIS, REDLOCK
from clusters.ssh.cluster import SshCluster
from clusters.ssh.factory import make_ssh_cluster
from clusters.zookeeper.server import SERVER as ZOOKEEPER
from core.options import RunOptions

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = f"sshtargets-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""
SUBNET = "10.88.32.0/24"
"""Outside the 10.77.0.0/16 pool the Docker clusters take from, and not test_ssh_runs.py's."""
HOSTS = {"zookeeper": 3, "redis": 1, "redlock": 5}
"""How many of the lab's hosts each target runs on."""
PROCESS = {
    "zookeeper": ZOOKEEPER.process,
    "redis": REDIS.process,
    "redlock": REDLOCK.process,
}
SHORT = {"nemesis_interval": 5, "time_limit": 15, "recovery_time": 3, "concurrency": 3, "seed": 1}
"""Every run here: three clients, 15 s, a fault every 5 s."""
LOCK = {
    "workload": "lock",
    "nemesis": ["partition", "pause", "kill"],
    "lease_ttl": 3,
    "keepalive": 1,
    "work_time": 0.3,
    "acquire_wait": 2,
    "accept_unavailable": True,
}
"""The lock runs' options; the same in Docker gives the verdicts asserted here. Three
faults in 15 s leave each kind one short window, and in one CI run no lock operation
succeeded in ZooKeeper's (the service was unavailable for that moment, which ``stats``
calls unknown): the runs accept that, said out loud, and what is asserted is mutual
exclusion and fencing."""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    tmp = tmp_path_factory.mktemp("ssh-lab")
    with ssh_lab(RUN, tmp, max(HOSTS.values()), SUBNET) as hosts:
        yield hosts


def run(lab: Lab, target: str, out: Path, **options: Any) -> tuple[Any, dict[str, Any]]:
    """A whole run of ``target`` over SSH on its hosts (``SHORT`` plus ``options``): its
    outcome and results.json, after checking it ran over SSH and left every host clean."""
    opts = RunOptions.of(target=target, out_dir=str(out), **{**SHORT, **options})
    outcome = whole_run(lab, opts, HOSTS[target])
    info = json.loads((outcome.run_dir / "cluster.json").read_text())
    assert info["backend"] == "ssh" and len(info["nodes"]) == HOSTS[target], info
    assert_clean(lab, PROCESS[target])
    return outcome, json.loads((outcome.run_dir / "results.json").read_text())


def summaries(results: dict[str, Any]) -> dict[str, Any]:
    return {name: (c["valid"], c["summary"]) for name, c in results["checkers"].items()}


# -- as in Docker: a Redis killed without persistence forgets everything ----------------------


def test_a_redis_server_killed_without_persistence_restarts_empty(lab: Lab, tmp_path: Path) -> None:
    import redis as redis_py

    c = make_ssh_cluster("redis", lab.hosts(1), lab.options(f"{RUN}-redis", persistence="none"))
    assert isinstance(c, SshCluster) and c.server.name == "redis"
    try:
        c.start(tmp_path)
        assert c.version().startswith("Redis server v=8.0")
        host, port = c.endpoints()["n1"].split(":")
        client = redis_py.Redis(host=host, port=int(port), socket_timeout=5)
        assert client.set("harness/lock/x", "holder-1", px=60_000)
        c.kill("n1")
        c.restart("n1")
        c.wait_healthy("n1", 20)
        assert client.get("harness/lock/x") is None, "the restarted server forgot the lock"
        client.close()
    finally:
        c.stop()
    assert_clean(lab, "redis-server")


# -- whole runs -------------------------------------------------------------------------------


def test_zookeeper_recipe_lock_with_fencing_is_valid_under_faults(lab: Lab, tmp_path: Path) -> None:
    outcome, results = run(lab, "zookeeper", tmp_path, **LOCK)
    assert outcome.valid is True, summaries(results)
    assert results["checkers"]["fencing"]["valid"] is True
    assert results["checkers"]["mutex"]["valid"] is True
    assert (outcome.run_dir / "nodes" / "n3" / "server.log").is_file()


def test_zookeeper_cas_register_with_sync_reads_is_valid_under_partitions(
    lab: Lab, tmp_path: Path
) -> None:
    outcome, results = run(
        lab,
        "zookeeper",
        tmp_path,
        workload="cas-register",
        read_mode="sync",
        nemesis=["partition"],
        nemesis_target="one",
    )
    # Seen once in seven runs here (never in Docker, 6 runs): a sync-then-read on the leader
    # returned the value before a write a follower had acknowledged, ~5 s after the heal.
    # ZooKeeper documents that (sync is not a quorum operation; issue 30): either outcome is
    # its own, and an invalid one must be that stale read, named as its rule.
    if outcome.valid is not True:
        from harness.suite import found_causes

        assert outcome.valid is False, summaries(results)
        assert found_causes(results) == {"documented-rule"}, summaries(results)


@pytest.mark.parametrize("target", ["redis", "redlock"])
def test_a_tokenless_redis_lock_is_judged_by_mutual_exclusion_alone(
    lab: Lab, tmp_path: Path, target: str
) -> None:
    # A single Redis server paused answers nothing while it is paused (counted from when
    # the pause took effect, issue 30): that window proves nothing, as the run accepts.
    single = {"accept_unavailable": True} if HOSTS[target] == 1 else {}
    outcome, results = run(
        lab, target, tmp_path, **{**LOCK, "nemesis": ["pause", "kill"], **single}
    )
    fencing = results["checkers"]["fencing"]
    assert fencing["applicable"] is False and fencing["valid"] == "unknown", fencing["summary"]
    assert results["checkers"]["mutex"]["valid"] is True, summaries(results)
    assert outcome.valid is True, summaries(results)
