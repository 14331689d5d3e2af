"""The SSH backend running etcd's ServerSpec on simulated Debian hosts: lifecycle,
refusals, faults, undo, wiring.

``SimHost`` (``ssh_sim``) is a ``FakeRemote`` that keeps a host's state (installed
packages, the server process, iptables rules) and answers the cluster's commands from it,
so these tests see what the cluster does on each host and in which order, and that
``stop`` leaves nothing behind. The same code runs against real sshd hosts in
tests/integration/test_ssh_etcd.py.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ssh_sim import SimHost

from clusters import run_target
from clusters.docker_cluster import DockerCluster
from clusters.etcd.server import SERVER, EtcdServer
from clusters.remote.base import CommandResult
from clusters.remote.hosts import HostSpec
from clusters.server import Address
from clusters.ssh.cluster import LeadingSshCluster, SshCluster, ssh_cluster
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from clusters.ssh.packages import PackageInstaller
from clusters.target_registry import resolve
from core.client import Invocation
from core.cluster import Cluster, ClusterError, HasLeader, Killable, Pausable
from core.option_checks import OptionError
from core.options import RunOptions
from core.run_clock import RunClock
from harness import validate
from harness.validate import check_target
from nemesis.node_faults import NodeKill, NodePause
from nemesis.nodes import NodeControl
from nemesis.partition import Partition

IPS = {"h1": "10.9.0.11", "h2": "10.9.0.12", "h3": "10.9.0.13"}


@dataclass(frozen=True)
class SimEtcdServer(EtcdServer):
    """etcd's spec with its HTTP probes answered from the simulated hosts (by address)."""

    hosts: Mapping[str, SimHost] = field(default_factory=dict)

    def healthy(self, at: Address) -> bool:
        host = self.hosts[at.ip]
        return host.running and not host.paused and not any(r for r in host.rules)

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        return "n1" if self.healthy(ips["n1"]) else "n2"


SimEtcd = SshCluster


@pytest.fixture
def hosts() -> dict[str, SimHost]:
    return {name: SimHost(name) for name in IPS}


@pytest.fixture
def deb_dir(tmp_path: Path) -> Path:
    d = tmp_path / "debs"
    d.mkdir()
    for name in ("etcd-server_3.5.16-4_amd64.deb", "etcd-client_3.5.16-4_amd64.deb"):
        (d / name).write_bytes(b"!<arch>")
    return d


def make(hosts: dict[str, SimHost], deb_dir: Path, **kw: object) -> SimEtcd:
    installer = PackageInstaller(SERVER.packages, SERVER.services, "upload", deb_dir)
    server = SimEtcdServer(hosts={IPS[name]: h for name, h in hosts.items()})
    return ssh_cluster(
        server,
        [HostSpec(h, "root", 22) for h in hosts],
        run_id="r1",
        remote=lambda s: hosts[s.host],
        installer=installer,
        resolve=IPS.__getitem__,
        **kw,
    )


@pytest.fixture
def started(hosts: dict[str, SimHost], deb_dir: Path, tmp_path: Path) -> SimEtcd:
    c = make(hosts, deb_dir)
    c.start(tmp_path / "run")
    return c


# -- lifecycle ------------------------------------------------------------------------------


def test_it_is_a_cluster_with_every_ability_the_nemeses_use(started: SimEtcd) -> None:
    for proto in (Cluster, Killable, Pausable, HasLeader, NodeControl):
        assert isinstance(started, proto)
    assert started.nodes() == ["n1", "n2", "n3"]
    assert started.endpoints() == {
        "n1": "10.9.0.11:2379",
        "n2": "10.9.0.12:2379",
        "n3": "10.9.0.13:2379",
    }
    assert started.host("n2") == "root@h2:22" and started.ip("n3") == "10.9.0.13"


def test_start_checks_installs_configures_and_launches_on_every_host(
    started: SimEtcd, hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    for h in hosts.values():
        text = h.commands()
        first = {
            key: next(i for i, t in enumerate(text) if re.search(key, t))
            for key in (
                "^true$",
                "for t in",
                "dpkg -i",
                "mkdir -p /var/lib/harness/r1",
                "nohup setsid",
            )
        }
        assert list(first.values()) == sorted(first.values()), f"order on {h.name}: {first}"
        assert {"etcd-server", "etcd-client"} <= h.installed
        assert h.running
    info = json.loads((tmp_path / "run" / "cluster.json").read_text())
    assert info["backend"] == "ssh" and info["directory"] == "/var/lib/harness/r1"
    assert info["nodes"]["n1"] == {
        "host": "root@h1:22",
        "ip": "10.9.0.11",
        "installed": ["adduser", "etcd-client", "etcd-server"],
        "install": "upload",
    }
    assert all(abs(v) < 1 for v in info["clock_offsets_s"].values())


def test_the_flags_are_the_docker_target_s_but_for_the_data_directory(
    started: SimEtcd, hosts: dict[str, SimHost]
) -> None:
    docker = DockerCluster(SERVER, run_id="r1", nodes=3)
    docker.layout("10.9.0.0/24")  # the Docker layout puts n1..n3 at .11-.13: same addresses
    for node in started.nodes():
        ours = list(started.launch(node).argv)
        theirs = list(docker.launch(node).argv)
        i = theirs.index("--data-dir")
        assert ours[: i + 1] == theirs[: i + 1] and ours[i + 2 :] == theirs[i + 2 :]
        assert ours[i + 1] == "/var/lib/harness/r1/data/etcd"
    launcher = hosts["h1"].files["/var/lib/harness/r1/start.sh"].decode()
    assert launcher.splitlines()[-1] == "exec " + shlex.join(started.launch("n1").argv)


@pytest.mark.parametrize(
    ("rule", "answer", "message"),
    [
        (
            r"^true$",
            {"exit": 1, "stderr": "sudo: a password is required"},
            "cannot run commands as root .*NOPASSWD",
        ),
        (r"for t in", {"stdout": "iptables\nsetsid\n"}, "missing iptables, setsid"),
        (
            r"ss -Hltn",
            {"stdout": "LISTEN 0 4096 127.0.0.1:2379 0.0.0.0:*\n"},
            r"port\(s\) 2379 already in use",
        ),
        (r"^test -e /var/lib/harness/r1$", {"exit": 0}, "already exists"),
    ],
)
def test_a_host_that_lacks_something_is_refused_before_anything_changes(
    hosts: dict[str, SimHost],
    deb_dir: Path,
    tmp_path: Path,
    rule: str,
    answer: dict[str, object],
    message: str,
) -> None:
    hosts["h2"].on(rule, **answer)  # type: ignore[arg-type]
    c = make(hosts, deb_dir)
    with pytest.raises(ClusterError, match=message) as e:
        c.start(tmp_path)
    assert str(e.value).startswith("root@h2:22: ") and "\n" not in str(e.value)
    assert not any(h.ran("dpkg -i|^mkdir -p|^nohup setsid") for h in hosts.values())
    c.stop()
    assert not any(h.ran("rm -rf|purge") for h in hosts.values()), "nothing to undo"


def test_a_server_that_exits_during_start_is_reported_with_its_log(
    hosts: dict[str, SimHost], deb_dir: Path, tmp_path: Path
) -> None:
    hosts["h3"].on(r"^nohup setsid", exit=0)  # "starts", but never runs
    c = make(hosts, deb_dir)
    with pytest.raises(
        ClusterError,
        match=r"server on n3 \(root@h3:22\) exited during start; "
        "its log ends with: etcd: serving",
    ):
        c.start(tmp_path)
    c.stop()
    assert all(h.installed == {"base-files", "iptables"} for h in hosts.values())


def test_stop_undoes_everything_and_a_second_stop_does_nothing(
    started: SimEtcd, hosts: dict[str, SimHost]
) -> None:
    hosts["h1"].rules.append(
        ["INPUT", "-s", "10.9.0.12", "-m", "comment", "--comment", "harness-dead", "-j", "DROP"]
    )
    hosts["h1"].rules.append(["INPUT", "-p", "tcp", "-j", "ACCEPT"])
    started.pause("n2")
    started.stop()
    for h in hosts.values():
        assert not h.running
        assert h.installed == {"base-files", "iptables"}
        assert h.ran(r"^rm -rf /var/lib/harness/r1$")
        assert h.closed == 1
    assert hosts["h1"].rules == [["INPUT", "-p", "tcp", "-j", "ACCEPT"]], "only ours removed"
    n = len(hosts["h1"].calls)
    started.stop()
    assert len(hosts["h1"].calls) == n


def test_keep_packages_leaves_them_installed(
    hosts: dict[str, SimHost], deb_dir: Path, tmp_path: Path
) -> None:
    c = make(hosts, deb_dir, keep_packages=True)
    c.start(tmp_path)
    c.stop()
    assert all("etcd-server" in h.installed and not h.running for h in hosts.values())
    assert not any(h.ran("purge") for h in hosts.values())


def test_stop_tries_every_step_on_every_host_then_reports(
    started: SimEtcd, hosts: dict[str, SimHost]
) -> None:
    hosts["h2"].on(r"^rm -rf /var/lib/harness", exit=1, stderr="rm: Device or resource busy")
    with pytest.raises(ClusterError) as e:
        started.stop()
    assert "n2 (root@h2:22): could not remove /var/lib/harness/r1" in str(e.value)
    assert "etcd-server" not in hosts["h2"].installed, "the purge still ran"
    assert all(not h.running for h in hosts.values())


def test_logs_and_launchers_are_collected(
    started: SimEtcd, hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    hosts["h1"].files["/var/lib/harness/r1/log/server.log"] = b"hello from n1\n"
    started.collect_logs(tmp_path / "nodes")
    assert (tmp_path / "nodes/n1/server.log").read_text() == "hello from n1\n"
    assert (tmp_path / "nodes/n1/start.sh").read_text().startswith("#!/bin/sh")
    assert (tmp_path / "nodes/n2/host.txt").read_text() == "root@h2:22\n"
    assert not (tmp_path / "nodes/n2/server.log").exists()  # none there: skipped quietly


# -- faults ---------------------------------------------------------------------------------


def test_kill_restart_pause_resume(started: SimEtcd, hosts: dict[str, SimHost]) -> None:
    started.pause("n1")
    assert started.is_paused("n1") and started.is_running("n1")
    started.resume("n1")
    assert not started.is_paused("n1")
    started.kill("n2")
    assert not started.is_running("n2")
    assert hosts["h2"].ran(r"^kill -KILL 4242$")
    started.restart("n2")
    assert started.is_running("n2")
    n = len(hosts["h2"].commands())
    started.restart("n2")  # running: nothing to do
    assert not any("nohup" in t for t in hosts["h2"].commands()[n:])
    assert started.version() == "etcd Version: 3.5.16"


def test_exec_runs_as_root_and_unknown_nodes_are_named(
    started: SimEtcd, hosts: dict[str, SimHost]
) -> None:
    hosts["h3"].on("^uname$", exit=0, stdout="Linux\n", stderr="warn\n")
    assert started.exec("n3", ["uname"]) == (0, "Linux\nwarn\n")
    assert hosts["h3"].calls[-1].sudo
    with pytest.raises(ClusterError, match=r"No node 'n9'.*n1, n2, n3"):
        started.exec("n9", "true")


def test_the_existing_nemeses_work_unchanged(started: SimEtcd, hosts: dict[str, SimHost]) -> None:
    part = Partition(started, "one", seed=1)
    done = part.invoke(Invocation("start-partition", {"topology": "one"}))
    assert done.type == "ok", done
    assert any(h.rules for h in hosts.values())
    part.teardown()
    assert not any(h.rules for h in hosts.values())

    pause = NodePause(started, "leader")
    done = pause.invoke(Invocation("start-pause", {"target": "leader"}))
    assert done.type == "ok" and done.value["nodes"] == ["n1"] and hosts["h1"].paused
    assert pause.invoke(Invocation("stop-pause", None)).type == "ok" and not hosts["h1"].paused

    kill = NodeKill(started, "n3")
    done = kill.invoke(Invocation("start-kill", {"target": "n3"}))
    assert done.type == "ok" and not hosts["h3"].running
    assert kill.invoke(Invocation("stop-kill", None)).type == "ok" and hosts["h3"].running


# -- wiring: make_ssh_cluster and the run's target ----------------------------------------------


@pytest.mark.parametrize(
    ("target", "hosts_", "opts", "message"),
    [
        ("sim", ["a", "b", "c"], {}, "cannot run over SSH yet; choose from: etcd"),
        ("etcd", ["a", "b"], {}, "odd number of hosts from 1 to 7, not 2"),
        ("etcd", ["a", "b", "A"], {}, "named twice"),
        ("etcd", ["a", "b", "c:x"], {}, "Bad host 'c:x'"),
        ("etcd", ["a"], {"port": 0}, "--ssh-port 0"),
        ("etcd", ["a"], {"key": "/nonexistent/id"}, "--ssh-key /nonexistent/id is not a file"),
        ("etcd", ["a"], {"install": "snap"}, "Unknown --ssh-install 'snap'"),
        ("etcd", ["a"], {"deb_dir": "/nonexistent"}, "--ssh-debs /nonexistent is not a directory"),
        ("etcd", [], {}, "No hosts given"),
        ("etcd", ["a"], {"known_hosts": "/nonexistent"}, "--ssh-known-hosts /nonexistent is not"),
    ],
)
def test_make_ssh_cluster_refuses_bad_input_in_one_line(
    target: str, hosts_: list[str], opts: dict[str, object], message: str
) -> None:
    with pytest.raises(ClusterError) as e:
        make_ssh_cluster(target, hosts_, SshClusterOptions(**opts))  # type: ignore[arg-type]
    assert message in str(e.value) and "\n" not in str(e.value)


def test_make_ssh_cluster_builds_without_touching_any_host(tmp_path: Path) -> None:
    key = tmp_path / "id"
    key.write_text("not read until connecting")
    c = make_ssh_cluster(
        "etcd", ["root@a:2222", "b", "c"], SshClusterOptions(run_id="x1", user="ops", key=str(key))
    )
    assert isinstance(c, LeadingSshCluster) and c.server == SERVER
    assert [c.host(n) for n in c.nodes()] == ["root@a:2222", "b", "c"]
    remote = c.remote("n2")  # made, not connected
    assert remote.host == "ops@b:22"


def test_the_run_s_target_on_ssh_hosts() -> None:
    etcd = resolve("etcd")
    hosts = {"ssh": True, "ssh_hosts": ["a", "b", "c"]}
    clock = RunOptions.of(target="etcd", workload="cas-register", nemesis=["clock"])
    with pytest.raises(OptionError, match="need real hosts"):
        check_target(etcd, clock)  # in Docker, etcd refuses clock faults...
    clock_on_hosts = RunOptions.of(
        target="etcd", workload="cas-register", nemesis=["clock"], **hosts
    )
    check_target(etcd, clock_on_hosts)  # ...on hosts it takes them
    with pytest.raises(OptionError, match="3 hosts were named"):
        validate.check_target(
            etcd, RunOptions.of(target="etcd", workload="cas-register", nodes=5, **hosts)
        )
    with pytest.raises(OptionError, match="--image"):
        validate.check_target(
            etcd, RunOptions.of(target="etcd", workload="cas-register", image="x", **hosts)
        )
    with pytest.raises(OptionError, match="no lock implementation 'nope'"):
        validate.check_target(
            etcd, RunOptions.of(target="etcd", workload="lock", lock="nope", **hosts)
        )
    cluster = run_target.make_cluster(etcd, RunOptions.of(target="etcd", **hosts), RunClock())
    assert isinstance(cluster, LeadingSshCluster) and cluster.run_id.startswith("etcd-")
    with pytest.raises(ClusterError, match="cannot run over SSH"):
        validate.check_target(
            resolve("sim"), RunOptions.of(target="sim", ssh=True, ssh_hosts=["a"])
        )


def test_a_failed_install_is_undone_too(
    hosts: dict[str, SimHost], deb_dir: Path, tmp_path: Path
) -> None:
    def broken(_: str) -> CommandResult:
        hosts["h2"].installed.add("adduser")
        return CommandResult(1, "", "dpkg: error processing archive")

    hosts["h2"].on(r"dpkg -i", respond=broken)
    c = make(hosts, deb_dir)
    with pytest.raises(ClusterError, match="root@h2:22: dpkg -i of 2 uploaded packages failed"):
        c.start(tmp_path)
    c.stop()
    assert all(h.installed == {"base-files", "iptables"} for h in hosts.values())
