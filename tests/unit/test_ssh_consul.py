"""Consul's ServerSpec on fake hosts (the SSH backend): the Docker target's configuration
under the run's directory, its ports, a consul already on the PATH, and the wiring into a run.

The hosts are ``FakeRemote``s that answer just what starting a cluster asks (consul is on
their PATH, so nothing is installed); the cluster's HTTP probes are stubbed. The same code
runs against real sshd hosts in tests/integration/test_ssh_consul_lock.py.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from clusters.consul.server import SERVER
from clusters.docker_cluster import DockerCluster
from clusters.remote.base import CommandResult
from clusters.remote.hosts import HostSpec
from clusters.ssh.cluster import LeadingSshCluster
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from clusters.target_registry import resolve
from core.cluster import Cluster, ClusterError, HasLeader, Killable, Pausable
from core.option_checks import OptionError
from core.options import RunOptions
from harness import validate
from nemesis.nodes import NodeControl
from tests.support.fake import FakeRemote

IPS = {"h1": "10.9.0.11", "h2": "10.9.0.12", "h3": "10.9.0.13"}
CONF = "/var/lib/harness/r1/conf/consul.json"


class ConsulHost(FakeRemote):
    """A host with consul on its PATH: the server runs once started."""

    def __init__(self, name: str) -> None:
        super().__init__(f"root@{name}:22")
        self.running = False
        self.on(r"^test -e ", exit=1)
        self.on(r"^command -v consul", exit=0)
        self.on(r"^nohup setsid", respond=self._start)
        self.on(
            r"server\.pid",
            respond=lambda _: CommandResult(0, "4242 S\n" if self.running else "", ""),
        )
        self.on(r"^date \+%s\.%N$", respond=lambda _: CommandResult(0, f"{time.time():.6f}\n", ""))
        self.on(r"^consul version$", stdout="Consul v1.8.7\nProtocol 2 spoken by default\n")

    def _start(self, _: str) -> CommandResult:
        self.running = True
        return CommandResult(0, "", "")


class Probed(LeadingSshCluster):
    """The real cluster, its HTTP probes answered without any network."""

    def is_ready(self) -> bool:
        return True


@pytest.fixture
def hosts() -> dict[str, ConsulHost]:
    return {name: ConsulHost(name) for name in IPS}


@pytest.fixture
def started(hosts: dict[str, ConsulHost], tmp_path: Path) -> Probed:
    c = Probed(
        SERVER,
        [HostSpec(h, "root", 22) for h in hosts],
        run_id="r1",
        remote=lambda s: hosts[s.host],
        resolve=IPS.__getitem__,
    )
    c.start(tmp_path / "run")
    return c


def test_it_has_every_ability_the_nemeses_use_and_installs_nothing(
    started: Probed, hosts: dict[str, ConsulHost], tmp_path: Path
) -> None:
    for proto in (Cluster, Killable, Pausable, HasLeader, NodeControl):
        assert isinstance(started, proto)
    assert started.endpoints()["n2"] == "10.9.0.12:8500"
    assert all(h.running for h in hosts.values())
    assert not any(h.ran(r"dpkg -i|apt-get") for h in hosts.values()), "consul is on the PATH"
    info = json.loads((tmp_path / "run" / "cluster.json").read_text())
    assert info["target"] == "consul" and info["nodes"]["n1"]["installed"] == []
    assert started.version() == "Consul v1.8.7"


def test_the_configuration_is_the_docker_target_s_in_the_run_directory(
    started: Probed, hosts: dict[str, ConsulHost]
) -> None:
    docker = DockerCluster(SERVER, run_id="r1", nodes=3)
    docker.layout("10.9.0.0/24")  # n1..n3 at .11-.13: the hosts' addresses
    for node, (name, host) in zip(started.nodes(), hosts.items(), strict=True):
        ours = json.loads(host.files[CONF])
        theirs = json.loads(docker.launch(node).files["/harness/consul.json"])
        assert ours.pop("data_dir") == "/var/lib/harness/r1/data/consul"
        theirs.pop("data_dir")
        assert ours == theirs
        assert ours["bind_addr"] == IPS[name]
        assert ours["retry_join"] == [ip for h, ip in IPS.items() if h != name]
    launcher = hosts["h1"].files["/var/lib/harness/r1/start.sh"].decode()
    assert launcher.splitlines()[-1] == "exec " + shlex.join(
        ["consul", "agent", "-config-file", CONF]
    )


def test_a_host_with_a_consul_port_taken_is_refused(
    hosts: dict[str, ConsulHost], tmp_path: Path
) -> None:
    hosts["h3"].on(r"ss -Hltn", stdout="LISTEN 0 4096 *:8600 *:*\n")
    c = Probed(
        SERVER,
        [HostSpec(h, "root", 22) for h in hosts],
        run_id="r1",
        remote=lambda s: hosts[s.host],
        resolve=IPS.__getitem__,
    )
    with pytest.raises(
        ClusterError,
        match=r"root@h3:22: port\(s\) 8600 already in use "
        r"\(another consul\?\)",
    ):
        c.start(tmp_path)
    c.stop()


def test_make_ssh_cluster_and_the_run_s_target(tmp_path: Path) -> None:
    c = make_ssh_cluster("consul", ["a", "b", "c"], SshClusterOptions(run_id="x1"))
    assert isinstance(c, LeadingSshCluster) and c.server == SERVER
    assert c.installer.commands == {"consul": "consul"}
    assert c.installer.packages == ["consul"] and c.installer.services == ["consul"]
    consul = resolve("consul")
    hosts = {"ssh": True, "ssh_hosts": ["a", "b", "c"]}
    validate.check_target(
        consul,
        RunOptions.of(
            target="consul",
            workload="cas-register",
            nemesis=["clock"],
            read_mode="consistent",
            **hosts,
        ),
    )
    with pytest.raises(OptionError, match="lease"):
        validate.check_target(
            consul, RunOptions.of(target="consul", workload="lock", lease_ttl=0.5, **hosts)
        )
