"""The registry workload on each Docker target (etcd, ZooKeeper, Consul, Redis): an
instance killed (SIGKILL of its worker) must disappear from every discovery client's
listing within its TTL plus the service's grace, the runner's fresh process registers as
a new member, and no running instance is dropped for want of a working keepalive.

One short run per target (lease TTL 2 s, keepalive 0.5 s, one instance and two discovery
clients, the kill 1.6 s into a 7 s workload): the cluster's start dominates.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_workloads import client_ops, run

pytestmark = [pytest.mark.docker, pytest.mark.slow]

KILL = [
    *("--workload", "registry", "--concurrency", "3", "--instances", "1"),
    *("--lease-ttl", "2", "--keepalive", "0.5", "--nemesis", "client-kill"),
    *("--nemesis-interval", "4", "--time-limit", "7", "--recovery-time", "1"),
]


@pytest.mark.parametrize("target", ["etcd", "zookeeper", "consul", "redis"])
def test_a_killed_instance_leaves_every_listing_within_ttl_and_grace(
    tmp_path: Path, target: str
) -> None:
    code, results, run_dir = run(tmp_path, "--target", target, *KILL)
    found = results["checkers"]["discovery"]
    assert code == 0, found["summary"]
    killed = [d for d in found["deaths"] if d["kind"] == "killed"]
    assert len(killed) == 1, found["deaths"]
    detection = killed[0]["detection_s"]
    assert detection is not None and 0 < detection <= found["deadline_s"], killed[0]
    assert len(found["members"]) == 2, "the fresh process registers as a new member"
    lists = [op for op in client_ops(run_dir) if op["f"] == "list" and op["type"] == "ok"]
    assert {op["node"] for op in lists} <= {"n1", "n2", "n3"} and len(lists) > 20
    assert not [r for r in found["live_removals"] if not r["expected"]], found["live_removals"]


def test_a_zookeeper_session_that_moved_off_a_cut_leader_is_named(tmp_path: Path) -> None:
    """Issue 30: an instance whose session moved to another server kept its registration
    through a 17 s cut of its server, and the verdict said only "no instance died long
    enough to be removed". Three instances, one per server: a partition of the leader
    drops its clients, whose sessions move to a server of the majority; the verdict names
    each move, with the partition."""
    code, results, _ = run(
        tmp_path,
        *("--target", "zookeeper", "--workload", "registry"),
        *("--concurrency", "5", "--instances", "3", "--lease-ttl", "10", "--keepalive", "2"),
        *("--nemesis", "partition", "--nemesis-target", "leader", "--nemesis-interval", "17"),
        *("--time-limit", "30", "--recovery-time", "2"),
    )
    found = results["checkers"]["discovery"]
    assert code == 0, found["summary"]
    moves = found["session_moves"]
    assert moves, found["summary"]
    for m in moves:
        assert m["from"] != m["to"] and {m["from"], m["to"]} <= {"n1", "n2", "n3"}, m
        assert "during a network partition" in m["sentence"], m
    assert f"{moves[0]['member']}'s session moved from {moves[0]['from']}" in found["summary"]
