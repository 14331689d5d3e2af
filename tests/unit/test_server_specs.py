"""Every target's ServerSpec, and the backends' shared lifecycle, without Docker or hosts.

One spec per target drives both backends: the Docker cluster of the registry and the SSH
cluster of ``make_ssh_cluster`` hold the very same spec; its files live where the backend
says; a spec with a leader makes a ``HasLeader`` cluster and one without does not. The
readiness wait both backends share is tested on a backend whose servers are scripted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from clusters._backend import LeadingMixin, ServerCluster
from clusters.docker_cluster import DockerCluster
from clusters.server import (
    Address,
    ClusterOptions,
    Launch,
    Peer,
    Place,
    RunSettings,
    ServerSpec,
)
from clusters.ssh.cluster import SshCluster
from clusters.ssh.factory import make_ssh_cluster, server_spec
from clusters.target_registry import TARGETS, ssh_targets
from core.cluster import ClusterError, HasLeader, Killable, Pausable

DOCKER = [name for name, spec in TARGETS.items() if spec.image is not None]
PEERS = [Peer(f"n{i}", i, f"10.1.2.{10 + i}", 2379) for i in range(1, 4)]


def docker_spec(name: str) -> ServerSpec:
    cluster = TARGETS[name].build(ClusterOptions(run_id="r1"))
    assert isinstance(cluster, DockerCluster)
    return cluster.server


@pytest.mark.parametrize("name", DOCKER)
def test_each_docker_target_runs_its_own_spec(name: str) -> None:
    server = docker_spec(name)
    assert server.name == name and server.image == TARGETS[name].image
    assert server.process != "?" and server.port in server.ports and server.packages
    assert server.default_nodes == TARGETS[name].default_nodes
    run = RunSettings(clock_origin=1, seed=7, bugs=())
    assert server.for_run(run) is server, "a Docker target's server needs nothing of the run"
    built = TARGETS[name].build(ClusterOptions(run_id="t1"), run)
    assert isinstance(built, DockerCluster) and built.server == server


@pytest.mark.parametrize("name", sorted(ssh_targets()))
def test_ssh_and_docker_run_the_same_spec(name: str) -> None:
    hosts = [f"h{i}" for i in range(1, docker_spec(name).default_nodes + 1)]
    cluster = make_ssh_cluster(name, hosts)
    assert isinstance(cluster, SshCluster)
    assert cluster.server == docker_spec(name) == server_spec(name).with_persistence(None)
    for backend in (cluster, TARGETS[name].build(ClusterOptions(run_id="r1"))):
        assert isinstance(backend, Killable) and isinstance(backend, Pausable)
        assert isinstance(backend, HasLeader) == cluster.server.has_leader


@pytest.mark.parametrize("name", sorted(ssh_targets()))
@pytest.mark.parametrize("image", [True, False])
def test_a_spec_writes_only_where_the_backend_says(name: str, image: bool) -> None:
    server = docker_spec(name)
    place = Place("/c/conf", "/c/data", image=image, run_id="r1")
    peers = PEERS[: 1 if name == "redis" else 3]
    for node in peers:
        launch = server.launch(node, peers, place)
        assert launch.argv and launch.argv[0]
        for path in launch.files:
            assert path.startswith(("/c/conf/", "/c/data/")), path
        assert not any(a.startswith(("/harness", "/data")) for a in launch.argv)
        assert not any("/data" in line and "/c/data" not in line for line in launch.prelude)


def test_an_unknown_ssh_target_is_one_line() -> None:
    with pytest.raises(ClusterError) as e:
        make_ssh_cluster("sim", ["h1"])
    assert "cannot run over SSH yet; choose from: " in str(e.value) and "\n" not in str(e.value)


# -- the readiness wait both backends share ------------------------------------------------


@dataclass(frozen=True)
class Scripted(ServerSpec):
    """A spec whose servers answer as ``up`` says (node address -> healthy)."""

    name: str = "scripted"
    process: str = "srv"
    start_timeout: float = 0.5
    up: Mapping[str, bool] = field(default_factory=dict)

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        return Launch(("srv",))

    def healthy(self, at: Address) -> bool:
        return self.up.get(at.ip, False)

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        return next((n for n, at in ips.items() if self.healthy(at)), None)


class Backend(ServerCluster):
    """A transport that only keeps which servers run."""

    def __init__(self, server: ServerSpec, running: set[str]) -> None:
        self.server = server
        self.name = server.name
        self.place = Place("/c", "/d", image=True)
        self.running = running

    def nodes(self) -> list[str]:
        return ["n1", "n2", "n3"]

    def ip(self, node: str) -> str:
        return f"10.0.0.{node[1:]}"

    def log_tail(self, node: str, lines: int = 15) -> str:
        return f"{node} says bye"

    def _states(self, node: str) -> list[str]:
        return ["S"] if node in self.running else []

    def _signal(self, node: str, sig: str) -> None:
        if sig == "KILL":
            self.running.discard(node)

    def _launch(self, node: str) -> None:
        self.running.add(node)


class LeadingBackend(LeadingMixin, Backend):
    pass


def test_wait_ready_returns_once_the_spec_says_the_cluster_serves() -> None:
    up = {f"10.0.0.{i}": True for i in (1, 2, 3)}
    backend = LeadingBackend(Scripted(up=up), {"n1", "n2", "n3"})
    backend.wait_ready()
    assert isinstance(backend, HasLeader) and backend.leader() == "n1"
    assert not isinstance(Backend(Scripted(), set()), HasLeader)


def test_wait_ready_names_a_server_that_exited_with_its_log() -> None:
    backend = Backend(Scripted(start_timeout=5), {"n1", "n3"})
    with pytest.raises(ClusterError, match=r"^scripted server on n2 exited during start; "):
        backend.wait_ready()


def test_wait_ready_gives_up_after_the_spec_s_timeout_with_the_laggards_logs() -> None:
    backend = Backend(Scripted(up={"10.0.0.1": True}), {"n1", "n2", "n3"})
    with pytest.raises(ClusterError) as e:
        backend.wait_ready()
    assert str(e.value) == (
        "scripted cluster not healthy after 0s; logs end with: n2: n2 says bye; n3: n3 says bye"
    )


def test_kill_and_restart_go_through_the_transport() -> None:
    backend = Backend(Scripted(), {"n1"})
    backend.kill("n1")
    assert not backend.is_running("n1")
    backend.restart("n1")
    assert backend.is_running("n1") and not backend.is_paused("n1")


def test_what_a_verdict_on_a_target_depends_on_is_said_with_its_source() -> None:
    """Issue 30: Consul sessions were created with LockDelay 0s (Consul's default and
    `consul lock`'s is 15 s), said only in a docstring."""
    from clusters.target_registry import TARGETS

    consul = {r.setting: r for r in TARGETS["consul"].rules}
    delay = consul["session lock-delay"]
    assert (delay.value, delay.default) == ("0 s", "15 s") and delay.source.startswith("https://")
    assert "up to twice the TTL" in consul["session TTL"].why
    assert delay.line("consul").startswith(
        "consul: session lock-delay 0 s (consul's default: 15 s)"
    )
    for spec in TARGETS.values():
        assert all(r.source.startswith("https://") and r.why for r in spec.rules), spec.name
