"""ZooKeeper, Redis and Redlock on simulated Debian hosts: what is each target's own.

The lifecycle every SSH target shares is tested with etcd (test_ssh_cluster.py). Here:
each target's packages, the files it writes (the Docker target's configuration, but for
where the data lives), its launcher's command line and environment, its probes (the
Docker target's, aimed at the hosts: the network is answered from the simulated hosts),
the sizes and persistence modes it refuses in one line, and how the run's clients find
the hosts. The same code runs against real sshd hosts in
tests/integration/test_ssh_targets.py.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from ssh_sim import SimHost

from clusters import run_target
from clusters.docker_cluster import DockerCluster
from clusters.redis import server as redis_server
from clusters.redis.server import REDIS, REDLOCK, RedisServer
from clusters.remote.hosts import HostSpec
from clusters.server import ServerSpec
from clusters.ssh.cluster import LeadingSshCluster, SshCluster, ssh_cluster
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from clusters.ssh.packages import PackageInstaller
from clusters.target_registry import resolve
from clusters.zookeeper import server as zk_server
from clusters.zookeeper.server import SERVER as ZOOKEEPER
from core.cluster import Cluster, ClusterError, HasLeader, Killable, Pausable
from core.options import RunOptions
from core.run_clock import RunClock
from harness import validate
from nemesis.nodes import NodeControl

IPS = {f"h{i}": f"10.9.0.{10 + i}" for i in range(1, 6)}
ZK_DEBS = ("libzookeeper-java", "libslf4j-java", "default-jre-headless", "openjdk-21-jre-headless")
REDIS_DEBS = ("redis-server", "redis-tools", "libjemalloc2")
ROOT = "/var/lib/harness/r1"


class Network:
    """The probes' TCP exchanges, answered from the simulated hosts (ip -> host)."""

    def __init__(self, hosts: dict[str, SimHost]) -> None:
        self.by_ip = {IPS[name]: host for name, host in hosts.items()}
        self.asked: list[tuple[str, int, bytes]] = []
        self.loading: set[str] = set()
        """Hosts whose Redis still replays its append-only file."""

    def exchange(self, ip: str, port: int, payload: bytes, **_: Any) -> bytes | None:
        self.asked.append((ip, port, payload))
        host = self.by_ip.get(ip)
        if host is None or not host.running or host.paused:
            return None
        if payload == b"srvr":  # n1 leads while it serves
            mode = "leader" if ip == IPS["h1"] else "follower"
            return f"Zookeeper version: 3.9.3\nMode: {mode}\n".encode()
        return b"-LOADING\r\n" if host.name in self.loading else b"+PONG\r\n"


Sim = tuple[Any, dict[str, SimHost], Network]
"""A cluster, its simulated hosts by name, the network its probes ask."""


def build(
    server: ServerSpec,
    n: int,
    debs: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    **options: Any,
) -> Sim:
    """The SSH cluster of ``server`` on ``n`` simulated hosts whose uploaded packages
    install ``debs``, with its probes answered by the returned ``Network``; not started."""
    hosts = {name: SimHost(name, debs) for name in list(IPS)[:n]}
    net = Network(hosts)
    monkeypatch.setattr(zk_server, "tcp_exchange", net.exchange)
    monkeypatch.setattr(redis_server, "tcp_exchange", net.exchange)
    deb_dir = tmp_path / "debs"
    deb_dir.mkdir(exist_ok=True)
    (deb_dir / f"{debs[0]}_1_all.deb").write_bytes(b"!<arch>")
    installer = PackageInstaller(server.packages, server.services, "upload", deb_dir)
    cluster = ssh_cluster(
        server.with_persistence(options.pop("persistence", None)),
        [HostSpec(h, "root", 22) for h in hosts],
        run_id="r1",
        remote=lambda s: hosts[s.host],
        installer=installer,
        resolve=IPS.__getitem__,
        **options,
    )
    return cluster, hosts, net


def start(
    server: ServerSpec,
    n: int,
    debs: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    **options: Any,
) -> Sim:
    """``build``, then started."""
    sim = build(server, n, debs, tmp_path, monkeypatch, **options)
    sim[0].start(tmp_path / "run")
    return sim


def launcher(host: SimHost) -> list[str]:
    return host.files[f"{ROOT}/start.sh"].decode().splitlines()


def docker_files(server: ServerSpec, n: int) -> list[dict[str, str]]:
    """The Docker target's files for each of ``n`` nodes at the same addresses (the
    Docker layout puts n1..nN at .11, .12...: the simulated hosts' addresses)."""
    docker = DockerCluster(server, run_id="r1", nodes=n)
    return [dict(docker.launch(peer.name).files) for peer in docker.layout("10.9.0.0/24")]


# -- the configuration Docker nodes and SSH hosts share ---------------------------------------


def test_zoo_cfg_and_redis_conf_are_the_docker_targets_configuration() -> None:
    assert zk_server.zoo_cfg({2: "10.0.0.2", 1: "10.0.0.1"}, "/d/zk").splitlines() == [
        "tickTime=500",
        "initLimit=40",
        "syncLimit=20",
        "minSessionTimeout=1000",
        "maxSessionTimeout=60000",
        "dataDir=/d/zk",
        "clientPort=2181",
        "4lw.commands.whitelist=*",
        "quorumListenOnAllIPs=true",
        "admin.enableServer=false",
        "server.1=10.0.0.1:2888:3888",
        "server.2=10.0.0.2:2888:3888",
    ]
    assert redis_server.redis_conf("none", "/d").splitlines() == [
        "port 6379",
        "bind 0.0.0.0",
        "protected-mode no",
        "daemonize no",
        'logfile ""',
        "dir /d",
        'save ""',
        "appendonly no",
    ]
    assert redis_server.redis_conf("aof-always", "/d").endswith(
        "appendonly yes\nappendfsync always\n"
    )
    assert zk_server.server_argv("/c/zoo.cfg", ["-Xa"])[:4] == (
        "java",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-Xa",
    )


# -- ZooKeeper ----------------------------------------------------------------------------


@pytest.fixture
def zk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sim:
    return start(ZOOKEEPER, 3, ZK_DEBS, tmp_path, monkeypatch)


def test_zookeeper_runs_the_docker_ensemble_s_configuration_with_data_under_the_run(
    zk: Sim,
) -> None:
    cluster, hosts, _ = zk
    for proto in (Cluster, Killable, Pausable, HasLeader, NodeControl):
        assert isinstance(cluster, proto)
    for i, (host, docker) in enumerate(
        zip(hosts.values(), docker_files(ZOOKEEPER, 3), strict=True), start=1
    ):
        ours = host.files[f"{ROOT}/conf/zoo.cfg"].decode()
        theirs = docker["/harness/zoo.cfg"]
        assert ours == theirs.replace("dataDir=/data/zk", f"dataDir={ROOT}/data/zk")
        assert "server.3=10.9.0.13:2888:3888" in ours
        assert host.files[f"{ROOT}/data/zk/myid"] == f"{i}\n".encode()
        lines = launcher(host)
        assert (
            "export CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
            in lines
        )
        argv = shlex.split(lines[-1])
        assert argv[:4] == ["exec", "java", "-Xmx256m", "-XX:+UseSerialGC"]
        assert "-XX:-UsePerfData" in argv, "no perf-data file left in /tmp by a killed JVM"
        assert argv[-2:] == [
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            f"{ROOT}/conf/zoo.cfg",
        ]
        assert not any("LD_PRELOAD" in line for line in lines)
        assert set(ZK_DEBS) <= host.installed
    assert cluster.endpoints() == {
        "n1": "10.9.0.11:2181",
        "n2": "10.9.0.12:2181",
        "n3": "10.9.0.13:2181",
    }


def test_zookeeper_packages_are_the_jar_and_a_headless_jre_started_by_nobody_else() -> None:
    assert ZOOKEEPER.packages == ("libzookeeper-java", "default-jre-headless")
    assert ZOOKEEPER.services == ()  # neither package has a service
    assert ZOOKEEPER.ports == (2181, 2888, 3888)


def test_zookeeper_probes_ask_srvr_on_the_hosts(zk: Sim) -> None:
    cluster, hosts, net = zk
    assert cluster.is_ready() and cluster.leader() == "n1"
    assert zk_server.mode(cluster.ip("n2")) == "follower"
    assert {(ip, port, payload) for ip, port, payload in net.asked} == {
        (ip, 2181, b"srvr") for ip in list(IPS.values())[:3]
    }
    cluster.pause("n1")
    assert hosts["h1"].paused and cluster.leader() is None and not cluster.is_ready()
    assert not cluster.is_healthy("n1") and cluster.is_healthy("n3")


def test_zookeeper_version_is_the_package_s(zk: Sim) -> None:
    cluster, hosts, _ = zk
    hosts["h1"].on(
        r"^dpkg-query -W -f '\$\{Version\}' libzookeeper-java$", stdout="3.9.3-1+deb13u1"
    )
    assert cluster.version() == "zookeeper 3.9.3-1+deb13u1"


def test_zookeeper_stop_purges_what_it_installed(zk: Sim) -> None:
    cluster, hosts, _ = zk
    cluster.stop()
    for host in hosts.values():
        assert host.installed == {"base-files", "iptables"} and not host.running
        assert host.ran(rf"^rm -rf {ROOT}$")


def test_a_host_whose_election_port_is_taken_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, hosts, _ = build(ZOOKEEPER, 3, ZK_DEBS, tmp_path, monkeypatch)
    hosts["h2"].on(r"ss -Hltn", stdout="LISTEN 0 50 *:3888 *:*\n")
    with pytest.raises(ClusterError, match=r"^root@h2:22: port\(s\) 3888 already in use"):
        cluster.start(tmp_path)
    assert not any(h.ran("dpkg -i") for h in hosts.values())


# -- Redis and Redlock ------------------------------------------------------------------------


@pytest.mark.parametrize("persistence", ["none", "aof-everysec", "aof-always"])
def test_redis_runs_the_docker_configuration_with_data_under_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, persistence: str
) -> None:
    cluster, hosts, _ = start(REDIS, 1, REDIS_DEBS, tmp_path, monkeypatch, persistence=persistence)
    host = hosts["h1"]
    theirs = docker_files(REDIS.with_persistence(persistence), 1)[0]["/harness/redis.conf"]
    ours = host.files[f"{ROOT}/conf/redis.conf"].decode()
    assert ours == theirs.replace("dir /data\n", f"dir {ROOT}/data\n")
    assert 'save ""' in ours, "no snapshot: a killed server without persistence loses all"
    assert ("appendonly no" in ours) == (persistence == "none")
    assert launcher(host)[-1] == f"exec redis-server {ROOT}/conf/redis.conf"
    assert host.ran(r"systemctl disable --now redis-server\.service")
    assert cluster.endpoints() == {"n1": "10.9.0.11:6379"}
    cluster.stop()
    assert host.installed == {"base-files", "iptables"}


def test_redis_is_healthy_when_ping_answers_pong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, _, net = start(REDIS, 1, REDIS_DEBS, tmp_path, monkeypatch)
    assert cluster.is_healthy("n1") and net.asked[-1] == ("10.9.0.11", 6379, b"PING\r\n")
    net.loading.add("h1")
    assert not cluster.is_healthy("n1"), "-LOADING: still replaying its append-only file"
    cluster.kill("n1")
    assert not cluster.is_healthy("n1")


def test_redlock_runs_independent_servers_with_the_same_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, hosts, _ = start(REDLOCK, 5, REDIS_DEBS, tmp_path, monkeypatch)
    confs = {h.files[f"{ROOT}/conf/redis.conf"] for h in hosts.values()}
    assert len(confs) == 1 and len(cluster.endpoints()) == 5
    theirs = docker_files(REDLOCK, 5)[4]["/harness/redis.conf"]
    assert confs.pop().decode() == theirs.replace("dir /data\n", f"dir {ROOT}/data\n")
    cluster.stop()
    assert all(h.installed == {"base-files", "iptables"} for h in hosts.values())


def test_redis_version_is_the_server_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, hosts, _ = start(REDIS, 1, REDIS_DEBS, tmp_path, monkeypatch)
    hosts["h1"].on(r"^redis-server --version$", stdout="Redis server v=8.0.2 sha=00000000:0\n")
    assert cluster.version() == "Redis server v=8.0.2 sha=00000000:0"


# -- sizes, persistence and the run's wiring ------------------------------------------------


@pytest.mark.parametrize(
    ("target", "n", "message"),
    [
        ("zookeeper", 2, "zookeeper needs an odd number of hosts from 1 to 7, not 2"),
        ("zookeeper", 9, "zookeeper needs an odd number of hosts from 1 to 7, not 9"),
        ("redis", 3, "redis runs one server, not 3; use --target redlock for several independent"),
        ("redlock", 4, "redlock needs an odd number of hosts from 1 to 7, not 4"),
    ],
)
def test_bad_sizes_are_refused_in_one_line(target: str, n: int, message: str) -> None:
    hosts = [f"h{i}" for i in range(1, n + 1)]
    with pytest.raises(ClusterError) as e:
        make_ssh_cluster(target, hosts)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("target", "n", "server", "cls"),
    [
        ("zookeeper", 1, ZOOKEEPER, LeadingSshCluster),
        ("zookeeper", 5, ZOOKEEPER, LeadingSshCluster),
        ("redis", 1, REDIS, SshCluster),
        ("redlock", 5, REDLOCK, SshCluster),
        ("redlock", 1, REDLOCK, SshCluster),
    ],
)
def test_good_sizes_make_the_target_s_cluster(
    target: str, n: int, server: ServerSpec, cls: type
) -> None:
    cluster = make_ssh_cluster(target, [f"h{i}" for i in range(1, n + 1)])
    assert type(cluster) is cls and isinstance(cluster, SshCluster)
    assert cluster.server == server and cluster.nodes() == [f"n{i}" for i in range(1, n + 1)]


@pytest.mark.parametrize(
    ("target", "persistence", "message"),
    [
        ("consul", "none", "Target consul does not accept persistence='none'; choose from: none"),
        ("etcd", "none", "Target etcd does not accept persistence='none'; choose from: fsync,"),
        ("zookeeper", "aof-always", "Target zookeeper does not accept persistence='aof-always'"),
        ("redis", "fsync", "persistence='fsync'; choose from: none, aof-everysec, aof-always"),
    ],
)
def test_persistence_is_refused_where_docker_refuses_it(
    target: str, persistence: str, message: str
) -> None:
    with pytest.raises(ClusterError) as e:
        make_ssh_cluster(target, ["h1"], SshClusterOptions(persistence=persistence))
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("target", ["redis", "redlock"])
def test_the_run_s_persistence_reaches_the_servers(target: str) -> None:
    spec, hosts = resolve(target), {"ssh": True, "ssh_hosts": ["10.9.0.11"]}
    cluster = run_target.make_cluster(
        spec, RunOptions.of(target=target, persistence="aof-everysec", **hosts), RunClock()
    )
    assert isinstance(cluster, SshCluster) and isinstance(cluster.server, RedisServer)
    assert cluster.server.persistence == "aof-everysec"
    default = run_target.make_cluster(spec, RunOptions.of(target=target, **hosts), RunClock())
    assert isinstance(default, SshCluster) and isinstance(default.server, RedisServer)
    assert default.server.persistence == "none"


@pytest.mark.parametrize(
    ("target", "hosts", "port", "spread"),
    [
        ("zookeeper", 3, 2181, True),
        ("redis", 1, 6379, True),
        ("redlock", 5, 6379, False),
    ],
)
def test_the_run_s_clients_connect_to_the_hosts(
    target: str, hosts: int, port: int, spread: bool
) -> None:
    ips = list(IPS.values())[:hosts]
    run = resolve(target)
    opts = RunOptions.of(target=target, workload="lock", ssh=True, ssh_hosts=ips)
    validate.check_target(run, opts)
    cluster = run_target.make_cluster(run, opts, RunClock())
    factory = run.client_factory(opts, cluster, "127.0.0.1:9")
    connector = factory.connector  # type: ignore[attr-defined]
    assert connector.endpoints == tuple(
        (f"n{i}", f"{ip}:{port}") for i, ip in enumerate(ips, start=1)
    )
    assert connector.spread is spread
    assert dict(connector.options)["prefix"] == f"harness-{run.name}-" + cluster.run_id[-6:]
