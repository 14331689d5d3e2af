"""Each fault's observable effect on a real cluster, and healing (issue: nemesis).

- a paused, or isolated, etcd leader is replaced by a new leader;
- an isolated etcd node cannot serve a linearizable read while the majority can (and it
  still serves a serializable, possibly stale, one);
- a Redis key with a 10 s TTL expires early after a +20 s clock bump;
- a killed Redis without persistence comes back empty.
Each test heals through the nemesis's own teardown and checks nothing is left behind.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from clusters._probe import wait_until
from clusters.docker_cluster import DockerCluster, LeadingDockerCluster
from clusters.server import ClusterOptions
from clusters.target_registry import TARGETS
from core.client import Invocation
from nemesis.faketime_skew import ClockSkew
from nemesis.node_faults import NodeKill, NodePause
from nemesis.partition import Partition

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def start(name: str, tmp: Path, **kw: object) -> DockerCluster:
    c = TARGETS[name].build(ClusterOptions(run_id=f"n{uuid.uuid4().hex[:8]}", **kw))  # type: ignore[arg-type]
    assert isinstance(c, DockerCluster)
    c.start(tmp)
    return c


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[LeadingDockerCluster]:
    c = start("etcd", tmp_path)
    assert isinstance(c, LeadingDockerCluster)
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[DockerCluster]:
    c = start("redis", tmp_path, persistence="none")
    try:
        yield c
    finally:
        c.stop()


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def etcd_read(c: DockerCluster, node: str, key: str, serializable: bool = False) -> bool:
    """Whether ``node`` answers a read of ``key`` within 2 s."""
    try:
        r = requests.post(
            f"http://{c.endpoints()[node]}/v3/kv/range",
            json={"key": b64(key), "serializable": serializable},
            timeout=2,
        )
        return r.ok
    except requests.RequestException:
        return False


def test_a_paused_etcd_leader_is_replaced(etcd: LeadingDockerCluster) -> None:
    old = etcd.leader()
    assert old is not None
    nem = NodePause(etcd, "leader")
    try:
        done = nem.invoke(Invocation("start-pause", {"target": "leader"}))
        assert done.type == "ok" and done.value["nodes"] == [old]
        # leader() is the majority's view: the paused node cannot answer or vote
        assert wait_until(lambda: etcd.leader() not in (None, old), 30, 0.5)
    finally:
        nem.teardown()
    assert not any(etcd.is_paused(n) for n in etcd.nodes())


def test_an_isolated_leader_is_replaced_and_a_minority_cannot_read(
    etcd: LeadingDockerCluster,
) -> None:
    key = f"k-{uuid.uuid4().hex[:6]}"
    requests.post(
        f"http://{etcd.endpoints()['n1']}/v3/kv/put",
        json={"key": b64(key), "value": b64("v")},
        timeout=5,
    ).raise_for_status()
    old = etcd.leader()
    assert old is not None
    nem = Partition(etcd, "leader")
    try:
        done = nem.invoke(Invocation("start-partition", {"topology": "leader"}))
        assert done.type == "ok", done
        others = [n for n in etcd.nodes() if n != old]
        assert wait_until(lambda: etcd.leader() not in (None, old), 30, 0.5)
        assert not etcd_read(etcd, old, key), "an isolated node served a linearizable read"
        assert etcd_read(etcd, old, key, serializable=True), "serializable reads stay local"
        assert etcd_read(etcd, others[0], key), "the majority serves linearizable reads"
    finally:
        nem.teardown()
    assert all("harness-" not in etcd.exec(n, ["iptables", "-S"])[1] for n in etcd.nodes())
    assert wait_until(lambda: etcd_read(etcd, old, key), 30, 0.5), "healed node serves again"


def test_a_redis_key_expires_early_after_a_clock_bump(redis: DockerCluster) -> None:
    import redis as redis_py

    host, port = redis.endpoints()["n1"].split(":")
    r = redis_py.Redis(host=host, port=int(port), socket_timeout=5)
    r.set("lease", "holder-1", px=10_000)
    nem = ClockSkew(redis)
    try:
        done = nem.invoke(Invocation("start-clock", {"target": "n1", "delta": 20}))
        assert done.type == "ok", done
        assert abs(done.value["offsets"]["n1"] - 20) < 1.5
        assert r.get("lease") is None, "a 10 s key must be gone after a +20 s jump"
    finally:
        nem.teardown()
    assert abs(nem.offset("n1") or 99) < 1.5, "the clock is back"
    r.close()


def test_a_killed_redis_without_persistence_comes_back_empty(redis: DockerCluster) -> None:
    import redis as redis_py

    host, port = redis.endpoints()["n1"].split(":")
    r = redis_py.Redis(host=host, port=int(port), socket_timeout=5)
    r.set("lock", "holder-1")
    nem = NodeKill(redis, "n1")
    try:
        assert nem.invoke(Invocation("start-kill", {"target": "n1"})).type == "ok"
        back = nem.invoke(Invocation("stop-kill"))
        assert back.type == "ok", back
    finally:
        nem.teardown()
    r2 = redis_py.Redis(host=host, port=int(port), socket_timeout=5)
    assert r2.get("lock") is None, "without persistence the restarted server forgot the lock"
    r.close()
    r2.close()
