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
is removed by that label at the end (``sshlab``, shared with test_ssh_targets.py).
"""

from __future__ import annotations

import base64
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from sshlab import USER, Lab, leftovers, ssh_lab, whole_run

from clusters._probe import wait_until
from clusters.remote.base import RemoteError, RemoteTimeout, get_text, put_text
from clusters.remote.hosts import HostSpec
from clusters.remote.ssh import InsecureHostKeyWarning, SshOptions, SshRemote
from clusters.ssh.cluster import LeadingSshCluster
from clusters.ssh.factory import make_ssh_cluster
from core.client import Invocation
from core.cluster import ClusterError
from nemesis.host_skew import HostClock, RefusedHost, clock_nemesis
from nemesis.node_faults import NodeKill, NodePause
from nemesis.partition import Partition

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = f"sshtest-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with ssh_lab(RUN, tmp_path_factory.mktemp("ssh-lab")) as hosts:
        yield hosts


# -- the remote layer over a real sshd ----------------------------------------------------


def test_commands_sudo_files_and_signals_over_ssh(lab: Lab, tmp_path: Path) -> None:
    r = lab.ssh(0)
    try:
        assert r.run("id -un").stdout.strip() == USER and not r.is_root()
        assert r.run("id -u", sudo=True).stdout.strip() == "0"
        put_text(r, "/etc/harness-test/secret.conf", "a=1\n", 0o600)  # a root-only place
        assert r.run(["cat", "/etc/harness-test/secret.conf"]).exit != 0
        assert get_text(r, "/etc/harness-test/secret.conf") == "a=1\n"
        assert (
            r.run(["stat", "-c", "%U %a", "/etc/harness-test/secret.conf"]).stdout == "root 600\n"
        )
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
    strict = SshRemote(
        HostSpec(lab.ips[1], USER), SshOptions(key=str(lab.key), known_hosts=str(empty))
    )
    with pytest.raises(RemoteError, match=r"is not in known_hosts.*ssh-keyscan"):
        strict.run("true")
    lab_mode = SshRemote(
        HostSpec(lab.ips[1], USER),
        SshOptions(key=str(lab.key), known_hosts=str(empty), strict=False),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lab_mode.run("true").ok
    assert any(issubclass(w.category, InsecureHostKeyWarning) for w in caught)
    lab_mode.close()
    wrong_user = SshRemote(
        HostSpec(lab.ips[1], "nobody"),
        SshOptions(key=str(lab.key), known_hosts=str(lab.known_hosts)),
    )
    with pytest.raises(RemoteError, match="login as nobody refused"):
        wrong_user.run("true")


# -- etcd over SSH ----------------------------------------------------------------------------


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def etcd_read(address: str, key: str, serializable: bool = False) -> str | None:
    """The value of ``key`` read from the member at ``address``; None when it cannot."""
    try:
        r = requests.post(
            f"http://{address}/v3/kv/range",
            json={"key": b64(key), "serializable": serializable},
            timeout=2,
        )
        kvs = r.json().get("kvs") if r.ok else None
    except (requests.RequestException, ValueError):
        return None
    return base64.b64decode(kvs[0]["value"]).decode() if kvs else ""


@pytest.fixture(scope="module")
def etcd(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadingSshCluster]:
    c = make_ssh_cluster("etcd", lab.hosts(), lab.options(f"{RUN}-etcd"))
    assert isinstance(c, LeadingSshCluster)
    try:
        c.start(tmp_path_factory.mktemp("run-etcd"))
        yield c
    finally:
        c.stop()


def test_a_write_then_a_read_through_the_json_gateway(etcd: LeadingSshCluster) -> None:
    ends = etcd.endpoints()
    requests.post(
        f"http://{ends['n1']}/v3/kv/put",
        json={"key": b64("greeting"), "value": b64("hello over ssh")},
        timeout=5,
    ).raise_for_status()
    assert etcd_read(ends["n3"], "greeting") == "hello over ssh"
    assert etcd.leader() in etcd.nodes()
    assert etcd.version().startswith("etcd Version: 3.5")


def test_an_isolated_leader_is_replaced(etcd: LeadingSshCluster) -> None:
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


def test_a_paused_leader_is_replaced(etcd: LeadingSshCluster) -> None:
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


def test_a_killed_member_comes_back(etcd: LeadingSshCluster) -> None:
    nem = NodeKill(etcd, "n2")
    try:
        done = nem.invoke(Invocation("start-kill", {"target": "n2"}))
        assert done.type == "ok" and not etcd.is_running("n2"), done
        back = nem.invoke(Invocation("stop-kill"))
        assert back.type == "ok", back
    finally:
        nem.teardown()
    assert etcd_read(etcd.endpoints()["n2"], "greeting") == "hello over ssh"


def test_clock_faults_are_refused_on_hosts_that_share_our_kernel(etcd: LeadingSshCluster) -> None:
    # The containers share this machine's kernel, hence its clock: the nemesis must refuse
    # them before it changes anything (no time service stopped, no date -s).
    before = [r.run("ls /tmp").stdout for r in (etcd.remote(n) for n in etcd.nodes())]
    with pytest.raises(RefusedHost, match=r"Refusing clock faults on n1 .*same boot_id"):
        HostClock(etcd)
    with pytest.raises(RefusedHost):
        clock_nemesis(etcd, "one", 0)
    after = [r.run("ls /tmp").stdout for r in (etcd.remote(n) for n in etcd.nodes())]
    assert before == after


def test_logs_are_collected(etcd: LeadingSshCluster, tmp_path: Path) -> None:
    etcd.collect_logs(tmp_path)
    for n in etcd.nodes():
        assert "=== harness: starting etcd" in (tmp_path / n / "server.log").read_text()
        assert (tmp_path / n / "start.sh").read_text().startswith("#!/bin/sh")


def test_stop_leaves_every_host_as_it_was(etcd: LeadingSshCluster, lab: Lab) -> None:
    etcd.stop()
    etcd.stop()  # twice is fine
    for i in range(len(lab.docker)):
        assert not leftovers(lab, i, "etcd")


# -- a whole run over SSH, wired as the CLI will wire it ----------------------------------


@pytest.mark.parametrize("faults", [["partition"], ["partition", "pause", "kill"]])
def test_a_whole_run_over_ssh(lab: Lab, tmp_path: Path, faults: list[str]) -> None:
    import json

    from core.options import RunOptions

    # Together the three faults can leave no quorum for a whole window (n1 cut off, n2
    # paused): that nothing succeeds then is etcd being correct, and the stats checker
    # would rightly call the pause untested. Accept it, and ask the other checkers.
    opts = RunOptions.of(
        target="etcd",
        workload="cas-register",
        nemesis=faults,
        nemesis_interval=4,
        time_limit=12,
        recovery_time=3,
        concurrency=3,
        out_dir=str(tmp_path),
        seed=1,
        accept_unavailable=len(faults) > 1,
    )
    outcome = whole_run(lab, opts)
    results = json.loads((outcome.run_dir / "results.json").read_text())
    verdicts = {name: c["valid"] for name, c in results["checkers"].items()}
    assert verdicts == {"linearizability": True, "stats": True, "faults": True}, results
    assert outcome.valid is True, outcome
    info = json.loads((outcome.run_dir / "cluster.json").read_text())
    assert info["backend"] == "ssh" and set(info["nodes"]) == {"n1", "n2", "n3"}
    assert (outcome.run_dir / "nodes" / "n1" / "server.log").is_file()
    for r in lab.docker:
        assert not r.run("pgrep -x etcd").ok
        assert not r.run("ls /var/lib/harness 2>/dev/null").stdout.strip()


def test_a_run_with_clock_faults_on_these_hosts_is_refused_and_cleaned_up(
    lab: Lab, tmp_path: Path
) -> None:
    from core.options import RunOptions

    opts = RunOptions.of(
        target="etcd",
        workload="cas-register",
        nemesis=["clock"],
        time_limit=5,
        out_dir=str(tmp_path),
        seed=1,
    )
    with pytest.raises(ClusterError, match="Refusing clock faults on n1"):
        whole_run(lab, opts)
    for r in lab.docker:
        assert not r.run("pgrep -x etcd").ok
        assert not r.run("ls /var/lib/harness 2>/dev/null").stdout.strip()
        assert "ii" not in r.run("dpkg-query -W -f '${db:Status-Abbrev}' etcd-server").stdout
