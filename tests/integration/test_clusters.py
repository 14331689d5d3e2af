"""Every Docker target from nothing: healthy, serving real clients, faults, logs, teardown.

One cluster per target serves all the tests of that target (module-scoped fixture); its
finalizer stops it and fails the run if any container or network of it is left. Images are
built on first use (minutes from nothing; seconds with the archive cache).
"""

from __future__ import annotations

import base64
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from clusters import cleanup
from clusters._docker import LABEL_RUN, connect
from clusters._probe import wait_until
from clusters.docker_cluster import DockerCluster
from clusters.server import ClusterOptions
from clusters.target_registry import TARGETS
from core.cluster import Cluster, ClusterError, HasLeader, Killable, Pausable

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DOCKER_TARGETS = [name for name, spec in TARGETS.items() if spec.image is not None]


def leftovers(run_id: str) -> list[str]:
    """Containers and networks still labelled with ``run_id``."""
    client = connect()
    filters = {"label": [f"{LABEL_RUN}={run_id}"]}
    found = [f"container {c.name}" for c in client.containers.list(all=True, filters=filters)]
    found += [f"network {n.name}" for n in client.networks.list(filters=filters)]
    return found


@pytest.fixture(scope="module", params=DOCKER_TARGETS)
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DockerCluster]:
    name: str = request.param
    run_id = f"t{uuid.uuid4().hex[:8]}"
    built = TARGETS[name].build(ClusterOptions(run_id=run_id))
    assert isinstance(built, DockerCluster)
    try:
        built.start(tmp_path_factory.mktemp(f"run-{name}"))
        yield built
    finally:
        built.stop()
        left = leftovers(run_id)
        if left:
            cleanup.down(run_id)
        assert not left, f"stop() left {left}"


# -- one write and one read through each system's real client library ------------------


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def etcd_write_read(endpoints: list[str], key: str, value: str) -> str:
    """Through etcd's JSON gateway (plain HTTP)."""
    base = f"http://{endpoints[0]}"
    requests.post(
        f"{base}/v3/kv/put", json={"key": _b64(key), "value": _b64(value)}, timeout=5
    ).raise_for_status()
    resp = requests.post(f"{base}/v3/kv/range", json={"key": _b64(key)}, timeout=5)
    resp.raise_for_status()
    return base64.b64decode(resp.json()["kvs"][0]["value"]).decode()


def zookeeper_write_read(endpoints: list[str], key: str, value: str) -> str:
    """Through kazoo, connected to the whole ensemble."""
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=",".join(endpoints), timeout=10)
    zk.start(timeout=20)
    try:
        zk.create(f"/{key}", value.encode())
        data, _ = zk.get(f"/{key}")
        return bytes(data).decode()
    finally:
        zk.stop()
        zk.close()


def consul_write_read(endpoints: list[str], key: str, value: str) -> str:
    """Through py-consul's KV API (a consistent read)."""
    import consul

    host, port = endpoints[0].split(":")
    c = consul.Consul(host=host, port=int(port))
    assert c.kv.put(key, value)
    _, entry = c.kv.get(key, consistency="consistent")
    assert entry is not None
    return bytes(entry["Value"]).decode()


def redis_write_read(endpoints: list[str], key: str, value: str) -> str:
    """Through redis-py, on every server (redlock's are independent)."""
    import redis

    seen = set()
    for ep in endpoints:
        host, port = ep.split(":")
        r = redis.Redis(host=host, port=int(port), socket_timeout=5, decode_responses=True)
        assert r.set(key, value)
        seen.add(str(r.get(key)))
        r.close()
    assert len(seen) == 1
    return seen.pop()


def postgres_write_read(endpoints: list[str], key: str, value: str) -> str:
    """Through psycopg 3, on the primary (libpq picks the read-write server)."""
    import psycopg

    from clusters.postgres.connection import conninfo

    with psycopg.connect(conninfo(endpoints, 10), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS smoke (k text PRIMARY KEY, v text)")
        conn.execute("INSERT INTO smoke VALUES (%s, %s)", (key, value))
        row = conn.execute("SELECT v FROM smoke WHERE k = %s", (key,)).fetchone()
    assert row is not None
    return str(row[0])


WRITE_READ: dict[str, Callable[[list[str], str, str], str]] = {
    "etcd": etcd_write_read,
    "zookeeper": zookeeper_write_read,
    "consul": consul_write_read,
    "redis": redis_write_read,
    "redlock": redis_write_read,
    "postgres": postgres_write_read,
}


def write_read(cluster: Cluster) -> None:
    key = f"k{uuid.uuid4().hex[:8]}"
    endpoints = list(cluster.endpoints().values())
    assert WRITE_READ[cluster.name](endpoints, key, "v1") == "v1"


def write_read_after_fault(cluster: Cluster, timeout: float = 20.0) -> None:
    """``write_read``, retried for a while: right after a fault, systems may refuse once
    (Consul answers "rpc error making call: stream closed" on its first forward to a
    restarted leader) even though they report healthy."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            write_read(cluster)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


# -- the tests -------------------------------------------------------------------------


def test_serves_a_write_then_a_read(cluster: DockerCluster) -> None:
    assert cluster.is_ready()
    assert sorted(cluster.endpoints()) == cluster.nodes()
    assert len(cluster.nodes()) == TARGETS[cluster.name].default_nodes
    write_read(cluster)


VERSIONS = {
    "etcd": r"etcd Version: 3\.\d+\.\d+",
    "redis": r"Redis server v=\d+\.",
    "redlock": r"Redis server v=\d+\.",
    "consul": r"Consul v1\.\d+\.\d+",
    "zookeeper": r"zookeeper 3\.\d+\.\d+",
    "postgres": r"postgres \(PostgreSQL\) \d+\.\d+",
}


def test_the_server_names_its_version(cluster: DockerCluster) -> None:
    assert re.match(VERSIONS[cluster.name], cluster.version()), cluster.version()


def test_leader_is_identified(cluster: DockerCluster) -> None:
    if cluster.name in ("redis", "redlock"):  # no replication, so no leader to report
        assert not isinstance(cluster, HasLeader)
        return
    assert isinstance(cluster, HasLeader)
    assert wait_until(lambda: cluster.leader() is not None, 15)
    assert cluster.leader() in cluster.nodes()


def test_exec_runs_in_the_node_with_iptables(cluster: DockerCluster) -> None:
    node = cluster.nodes()[0]
    code, out = cluster.exec(node, ["iptables", "-L", "INPUT", "-n"])
    assert code == 0, out
    code, out = cluster.exec(node, "hostname")
    assert (code, out.strip()) == (0, node)
    pid = cluster.pid(node)
    assert Path(f"/proc/{pid}/ns/net").exists()


def test_kill_and_restart_one_node(cluster: DockerCluster) -> None:
    assert isinstance(cluster, Killable)
    node = cluster.nodes()[-1]
    cluster.kill(node)
    assert not cluster.is_running(node)
    assert not cluster.is_healthy(node)
    cluster.restart(node)
    cluster.wait_healthy(node, timeout=60)
    assert wait_until(cluster.is_ready, 60)
    write_read_after_fault(cluster)


def test_pause_and_resume_one_node(cluster: DockerCluster) -> None:
    assert isinstance(cluster, Pausable)
    node = cluster.nodes()[-1]
    cluster.pause(node)
    try:
        assert cluster.is_paused(node)
        assert not cluster.is_healthy(node)
    finally:
        cluster.resume(node)
    assert not cluster.is_paused(node)
    cluster.wait_healthy(node, timeout=60)
    assert wait_until(cluster.is_ready, 60)
    write_read_after_fault(cluster)


def test_logs_are_collected(cluster: DockerCluster, tmp_path: Path) -> None:
    cluster.collect_logs(tmp_path)
    for node in cluster.nodes():
        log = tmp_path / node / "server.log"
        assert log.is_file() and log.stat().st_size > 0, f"no log for {node}"
        assert (tmp_path / node / "conf" / "start.sh").is_file()


def test_faketime_moves_the_redis_clock(tmp_path: Path) -> None:
    import redis

    c = TARGETS["redis"].build(ClusterOptions(run_id=f"t{uuid.uuid4().hex[:8]}"))
    assert isinstance(c, DockerCluster)
    try:
        c.start(tmp_path)
        host, port = c.endpoints()["n1"].split(":")
        r = redis.Redis(host=host, port=int(port), socket_timeout=5)
        before = r.time()[0]
        c.exec("n1", "echo +3600 > /tmp/faketime")
        assert r.time()[0] - before >= 3500
    finally:
        c.stop()


def test_stop_is_idempotent_and_leaves_nothing(tmp_path: Path) -> None:
    run_id = f"t{uuid.uuid4().hex[:8]}"
    c = TARGETS["redis"].build(ClusterOptions(run_id=run_id, persistence="aof-always"))
    c.stop()  # before start: nothing to do
    try:
        c.start(tmp_path)
        assert leftovers(run_id)
    finally:
        c.stop()
        c.stop()
    assert leftovers(run_id) == []
    assert not cleanup.down(run_id)


def test_a_missing_custom_image_is_one_clear_error(tmp_path: Path) -> None:
    run_id = f"t{uuid.uuid4().hex[:8]}"
    c = TARGETS["redis"].build(ClusterOptions(run_id=run_id, image="harness/nope:missing"))
    try:
        with pytest.raises(ClusterError, match="not in the local engine"):
            c.start(tmp_path)
    finally:
        c.stop()
    assert leftovers(run_id) == []


def test_a_server_that_dies_at_start_is_one_error_with_its_log(tmp_path: Path) -> None:
    from collections.abc import Sequence
    from dataclasses import dataclass

    from clusters.etcd.server import EtcdServer
    from clusters.server import Launch, Peer, Place

    @dataclass(frozen=True)
    class BrokenEtcd(EtcdServer):
        def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
            return Launch(("etcd", "--no-such-flag"))

    run_id = f"t{uuid.uuid4().hex[:8]}"
    c = DockerCluster(BrokenEtcd(), run_id=run_id, nodes=1)
    try:
        with pytest.raises(ClusterError, match=r"n1 exited during start; its log ends with: .*"):
            c.start(tmp_path)
    finally:
        c.stop()
    assert leftovers(run_id) == []
