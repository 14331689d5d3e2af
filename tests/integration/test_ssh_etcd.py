"""The SSH backend against real sshd hosts: containers of ours made for the purpose.

Three ``sshhost`` containers (Debian trixie with openssh-server and sudo, built like the
targets' images) on an internal network of their own play the hosts; the harness logs in
as an unprivileged user with passwordless sudo, with strict host key checking against a
known_hosts file made from the containers' own keys. The network is internal, so the hosts
reach no mirror: etcd's .debs are resolved and downloaded on this machine and uploaded.

Checked here: the remote layer over a real sshd (sudo, SFTP, signals, timeouts, host keys),
then etcd installed on the 3 hosts, a write and a read through its JSON gateway, the
existing partition, pause and kill nemeses with their effect (an isolated or paused
leader is replaced, a killed member comes back), logs, the refusal of clock faults (the
containers share this machine's kernel clock: no clock is ever set here), and finally
that stopping leaves every host as it found it (packages purged, directory, processes and
rules gone). Then a whole ``harness run`` over SSH, the way the CLI will do it.

Everything created carries ``harness=1`` and this module's own ``harness.run`` label and
is removed by that label at the end.
"""

from __future__ import annotations

import base64
import logging
import subprocess
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import requests

from clusters import _docker
from clusters._network import create_network, node_ip
from clusters._probe import tcp_exchange, wait_until
from clusters.base import ClusterError
from clusters.images import ensure_image
from clusters.remote.base import RemoteError, RemoteTimeout, get_text, put_text
from clusters.remote.docker_remote import DockerRemote
from clusters.remote.hosts import HostSpec
from clusters.remote.ssh import InsecureHostKeyWarning, SshOptions, SshRemote
from clusters.ssh.etcd import SshEtcdCluster
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from harness.client import Invocation
from nemesis.host_clock import HostClock, RefusedHost, clock_nemesis
from nemesis.node_faults import NodeKill, NodePause
from nemesis.partition import Partition

pytestmark = [pytest.mark.docker, pytest.mark.slow]

log = logging.getLogger(__name__)
RUN = f"sshtest-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""
USER = "harness"


@dataclass
class Lab:
    """The stand-in hosts: addresses, the login key, a known_hosts file, the containers."""

    ips: list[str]
    key: Path
    known_hosts: Path
    docker: list[DockerRemote]

    def hosts(self) -> list[str]:
        return [f"{USER}@{ip}" for ip in self.ips]

    def options(self, run_id: str, **kw: Any) -> SshClusterOptions:
        return SshClusterOptions(run_id=run_id, key=str(self.key),
                                 known_hosts=str(self.known_hosts), install="upload", **kw)

    def ssh(self, i: int, **kw: Any) -> SshRemote:
        opts = SshOptions(key=str(self.key), known_hosts=str(self.known_hosts), **kw)
        return SshRemote(HostSpec(self.ips[i], USER), opts)


def remove_ours() -> list[str]:
    """Remove the containers and network labelled with this module's run; their names."""
    from docker.errors import NotFound

    client = _docker.connect()
    filters = {"label": [f"{_docker.LABEL}=1", f"{_docker.LABEL_RUN}={RUN}"]}
    removed = []
    for c in client.containers.list(all=True, filters=filters):
        try:
            c.remove(force=True)
        except NotFound:
            pass
        removed.append(str(c.name))
    for net in client.networks.list(filters=filters):
        try:
            net.remove()
        except NotFound:
            pass
        removed.append(str(net.name))
    return removed


def sshd_up(remote: DockerRemote, ip: str) -> bool:
    """Whether the host made its keys and its sshd greets us."""
    return (remote.run("test -s /etc/ssh/ssh_host_ed25519_key.pub").ok
            and tcp_exchange(ip, 22, b"", until=b"SSH-") is not None)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    client = _docker.connect()
    image = ensure_image("sshhost", log.info, client=client)
    tmp = tmp_path_factory.mktemp("ssh-lab")
    key = tmp / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", RUN, "-f", str(key)],
                   check=True)
    try:
        network, subnet = create_network(client, f"harness-{RUN}-sshhost",
                                         _docker.labels(RUN, "sshhost"))
        ips, remotes, known = [], [], []
        for i in (1, 2, 3):
            ip = node_ip(subnet, i)
            endpoint = client.api.create_endpoint_config(ipv4_address=ip)
            container = client.containers.create(
                image, name=f"harness-{RUN}-h{i}", hostname=f"h{i}",
                labels=_docker.labels(RUN, "sshhost", f"h{i}"), init=True,
                cap_add=["NET_ADMIN"],  # iptables in the host's own network namespace
                network=network.name, networking_config={network.name: endpoint})
            container.start()
            remote = DockerRemote(container)
            for home, owner in ((f"/home/{USER}", USER), ("/root", "root")):
                remote.upload(Path(f"{key}.pub"), f"{home}/.ssh/authorized_keys", 0o600)
                remote.run(f"chown -R {owner}: {home}/.ssh && chmod 700 {home}/.ssh", sudo=True)
            assert wait_until(partial(sshd_up, remote, ip), 30, 0.2), f"no sshd on {ip}"
            pub = get_text(remote, "/etc/ssh/ssh_host_ed25519_key.pub").split()
            known.append(f"{ip} {pub[0]} {pub[1]}\n")
            ips.append(ip)
            remotes.append(remote)
        known_hosts = tmp / "known_hosts"
        known_hosts.write_text("".join(known))
        yield Lab(ips, key, known_hosts, remotes)
    finally:
        remove_ours()


# -- the remote layer over a real sshd ----------------------------------------------------

def test_commands_sudo_files_and_signals_over_ssh(lab: Lab, tmp_path: Path) -> None:
    r = lab.ssh(0)
    try:
        assert r.run("id -un").stdout.strip() == USER and not r.is_root()
        assert r.run("id -u", sudo=True).stdout.strip() == "0"
        put_text(r, "/etc/harness-test/secret.conf", "a=1\n", 0o600)  # a root-only place
        assert r.run(["cat", "/etc/harness-test/secret.conf"]).exit != 0
        assert get_text(r, "/etc/harness-test/secret.conf") == "a=1\n"
        assert r.run(["stat", "-c", "%U %a", "/etc/harness-test/secret.conf"]).stdout == \
            "root 600\n"
        assert r.run("setsid sleep 300 </dev/null >/dev/null 2>&1 &", sudo=True).ok
        assert wait_until(lambda: r.run(["pgrep", "-x", "sleep"]).ok, 5, 0.1)
        assert r.signal("sleep", "TERM")
        assert wait_until(lambda: not r.run(["pgrep", "-x", "sleep"]).ok, 5, 0.1)
        transport = r._transport()
        for _ in range(5):
            r.run("true")
        assert r._transport() is transport, "one transport per host"
        with pytest.raises(RemoteTimeout, match=rf"{USER}@{lab.ips[0]}:22: `sleep 5` did not"):
            r.run(["sleep", "5"], timeout=0.5)
    finally:
        r.run(["rm", "-rf", "/etc/harness-test"], sudo=True)
        r.close()
    assert not lab.docker[0].run("ls /tmp/.harness-xfer* 2>/dev/null").stdout, "no staging left"


def test_host_keys_are_checked_unless_told_otherwise(lab: Lab, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    strict = SshRemote(HostSpec(lab.ips[1], USER),
                       SshOptions(key=str(lab.key), known_hosts=str(empty)))
    with pytest.raises(RemoteError, match=r"is not in known_hosts.*ssh-keyscan"):
        strict.run("true")
    lab_mode = SshRemote(HostSpec(lab.ips[1], USER),
                         SshOptions(key=str(lab.key), known_hosts=str(empty), strict=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lab_mode.run("true").ok
    assert any(issubclass(w.category, InsecureHostKeyWarning) for w in caught)
    lab_mode.close()
    wrong_user = SshRemote(HostSpec(lab.ips[1], "nobody"),
                           SshOptions(key=str(lab.key), known_hosts=str(lab.known_hosts)))
    with pytest.raises(RemoteError, match="login as nobody refused"):
        wrong_user.run("true")


# -- etcd over SSH ----------------------------------------------------------------------------

def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def etcd_read(address: str, key: str, serializable: bool = False) -> str | None:
    """The value of ``key`` read from the member at ``address``; None when it cannot."""
    try:
        r = requests.post(f"http://{address}/v3/kv/range",
                          json={"key": b64(key), "serializable": serializable}, timeout=2)
        kvs = r.json().get("kvs") if r.ok else None
    except (requests.RequestException, ValueError):
        return None
    return base64.b64decode(kvs[0]["value"]).decode() if kvs else ""


@pytest.fixture(scope="module")
def etcd(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshEtcdCluster]:
    c = make_ssh_cluster("etcd", lab.hosts(), lab.options(f"{RUN}-etcd"))
    assert isinstance(c, SshEtcdCluster)
    try:
        c.start(tmp_path_factory.mktemp("run-etcd"))
        yield c
    finally:
        c.stop()


def test_a_write_then_a_read_through_the_json_gateway(etcd: SshEtcdCluster) -> None:
    ends = etcd.endpoints()
    requests.post(f"http://{ends['n1']}/v3/kv/put",
                  json={"key": b64("greeting"), "value": b64("hello over ssh")},
                  timeout=5).raise_for_status()
    assert etcd_read(ends["n3"], "greeting") == "hello over ssh"
    assert etcd.leader() in etcd.nodes()
    assert etcd.version().startswith("etcd Version: 3.5")


def test_an_isolated_leader_is_replaced(etcd: SshEtcdCluster) -> None:
    old = etcd.leader()
    assert old is not None
    nem = Partition(etcd, "leader")
    try:
        done = nem.invoke(Invocation("start-partition", {"topology": "leader"}))
        assert done.type == "ok", done
        assert wait_until(lambda: etcd.leader() not in (None, old), 30, 0.5)
        assert etcd_read(etcd.endpoints()[old], "greeting") is None, "a minority cannot read"
        other = next(n for n in etcd.nodes() if n != old)
        assert etcd_read(etcd.endpoints()[other], "greeting") == "hello over ssh"
    finally:
        nem.teardown()
    assert all("harness-" not in etcd.exec(n, ["iptables", "-S"])[1] for n in etcd.nodes())
    assert wait_until(lambda: etcd_read(etcd.endpoints()[old], "greeting") is not None, 30, 0.5)


def test_a_paused_leader_is_replaced(etcd: SshEtcdCluster) -> None:
    assert wait_until(lambda: etcd.leader() is not None, 30, 0.5)
    old = etcd.leader()
    nem = NodePause(etcd, "leader")
    try:
        done = nem.invoke(Invocation("start-pause", {"target": "leader"}))
        assert done.type == "ok" and done.value["nodes"] == [old], done
        assert wait_until(lambda: etcd.leader() not in (None, old), 30, 0.5)
    finally:
        nem.teardown()
    assert not any(etcd.is_paused(n) for n in etcd.nodes())


def test_a_killed_member_comes_back(etcd: SshEtcdCluster) -> None:
    nem = NodeKill(etcd, "n2")
    try:
        done = nem.invoke(Invocation("start-kill", {"target": "n2"}))
        assert done.type == "ok" and not etcd.is_running("n2"), done
        back = nem.invoke(Invocation("stop-kill"))
        assert back.type == "ok", back
    finally:
        nem.teardown()
    assert etcd_read(etcd.endpoints()["n2"], "greeting") == "hello over ssh"


def test_clock_faults_are_refused_on_hosts_that_share_our_kernel(etcd: SshEtcdCluster) -> None:
    # The containers share this machine's kernel, hence its clock: the nemesis must refuse
    # them before it changes anything (no time service stopped, no date -s).
    before = [r.run("ls /tmp").stdout for r in (etcd.remote(n) for n in etcd.nodes())]
    with pytest.raises(RefusedHost, match=r"Refusing clock faults on n1 .*same boot_id"):
        HostClock(etcd)
    with pytest.raises(RefusedHost):
        clock_nemesis(etcd, "one", 0)
    after = [r.run("ls /tmp").stdout for r in (etcd.remote(n) for n in etcd.nodes())]
    assert before == after


def test_logs_are_collected(etcd: SshEtcdCluster, tmp_path: Path) -> None:
    etcd.collect_logs(tmp_path)
    for n in etcd.nodes():
        assert "=== harness: starting etcd" in (tmp_path / n / "server.log").read_text()
        assert (tmp_path / n / "start.sh").read_text().startswith("#!/bin/sh")


def test_stop_leaves_every_host_as_it_was(etcd: SshEtcdCluster, lab: Lab) -> None:
    etcd.stop()
    etcd.stop()  # twice is fine
    for r in lab.docker:
        assert not r.run(f"test -e /var/lib/harness/{RUN}-etcd").ok
        assert not r.run("pgrep -x etcd").ok
        assert "ii" not in r.run("dpkg-query -W -f '${db:Status-Abbrev}' etcd-server").stdout
        assert "harness-" not in r.run("iptables -S", sudo=True).stdout
        assert not r.run("test -e /usr/sbin/policy-rc.d").ok
        assert not r.run("ls -d /var/cache/harness-debs-* /tmp/.harness-xfer* 2>/dev/null").stdout


# -- a whole run over SSH, wired as the CLI will wire it ----------------------------------

@pytest.mark.parametrize("faults", [["partition"], ["partition", "pause", "kill"]])
def test_a_whole_run_over_ssh(lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              faults: list[str]) -> None:
    import json

    from rich.console import Console

    from clusters.ssh.target import ssh_target
    from harness import orchestrate
    from harness.options import RunOptions
    from harness.targets import resolve_target

    monkeypatch.setattr(orchestrate, "resolve_target", lambda name: ssh_target(
        resolve_target(name), lab.hosts(), lab.options("unused")))
    opts = RunOptions(target="etcd", workload="cas-register", nemesis=faults,
                      nemesis_interval=4, time_limit=12, recovery_time=3, concurrency=3,
                      out_dir=str(tmp_path), seed=1)
    outcome = orchestrate.run_test(opts, Console(quiet=True))
    assert outcome.valid is True, outcome
    info = json.loads((outcome.run_dir / "cluster.json").read_text())
    assert info["backend"] == "ssh" and set(info["nodes"]) == {"n1", "n2", "n3"}
    assert (outcome.run_dir / "nodes" / "n1" / "server.log").is_file()
    for r in lab.docker:
        assert not r.run("pgrep -x etcd").ok
        assert not r.run("ls /var/lib/harness 2>/dev/null").stdout.strip()


def test_a_run_with_clock_faults_on_these_hosts_is_refused_and_cleaned_up(
        lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from clusters.ssh.target import ssh_target
    from harness import orchestrate
    from harness.options import RunOptions
    from harness.targets import resolve_target

    monkeypatch.setattr(orchestrate, "resolve_target", lambda name: ssh_target(
        resolve_target(name), lab.hosts(), lab.options("unused")))
    opts = RunOptions(target="etcd", workload="cas-register", nemesis=["clock"],
                      time_limit=5, out_dir=str(tmp_path), seed=1)
    with pytest.raises(ClusterError, match="Refusing clock faults on n1"):
        orchestrate.run_test(opts, Console(quiet=True))
    for r in lab.docker:
        assert not r.run("pgrep -x etcd").ok
        assert not r.run("ls /var/lib/harness 2>/dev/null").stdout.strip()
        assert "ii" not in r.run("dpkg-query -W -f '${db:Status-Abbrev}' etcd-server").stdout
