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
