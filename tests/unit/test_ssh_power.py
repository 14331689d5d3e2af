"""The power-loss layer on SSH hosts (``clusters.ssh.power``) on simulated hosts: probed and
mounted before anything is installed, a power cut that kills then cuts, unmounted before
the run's directory goes, a host that cannot refused in one line, and the option checks
that now let the fault through to that probe.

The hosts are ``ssh_sim``'s ``SimHost`` running etcd's spec (as in test_ssh_cluster.py),
whose layer answers its control socket from a rule. The same code runs on stand-in sshd
hosts that can mount FUSE in tests/integration/test_ssh_power_loss.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ssh_sim import SimHost
from test_ssh_cluster import IPS, make

from clusters import run_target
from clusters.ssh import cleanup, power
from clusters.ssh.cluster import SshCluster
from clusters.ssh.process import Layout
from clusters.target_registry import resolve
from core.cluster import ClusterError, PowerCuttable
from core.option_checks import OptionError
from core.options import RunOptions
from core.run_clock import RunClock
from harness.validate import check_target

ROOT = "/var/lib/harness/r1"
CUT = '{"discarded": {"/etcd/member/wal/0000000000000000-0000000000000000.wal": 4096}}\n'


@pytest.fixture
def hosts() -> dict[str, SimHost]:
    out = {name: SimHost(name) for name in IPS}
    for h in out.values():
        h.on(r"_powerfs\.mount ctl \S+ sync", stdout='{"synced": true}\n')
        h.on(r"_powerfs\.mount ctl \S+ cut", stdout=CUT)
    return out


def _cluster(hosts: dict[str, SimHost], tmp_path: Path, power_loss: bool = True) -> SshCluster:
    debs = tmp_path / "debs"
    debs.mkdir(exist_ok=True)
    for name in ("etcd-server_3.5.16-4_amd64.deb", "etcd-client_3.5.16-4_amd64.deb"):
        (debs / name).write_bytes(b"!<arch>")
    return make(hosts, debs, power_loss=power_loss)


def _first(h: SimHost, pattern: str) -> int:
    """The index of the first call (command or upload) matching ``pattern``."""
    return next(i for i, c in enumerate(h.calls) if re.search(pattern, c.text))


def test_each_host_is_probed_and_its_data_served_by_the_layer_before_anything_is_installed(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    c = _cluster(hosts, tmp_path)
    c.start(tmp_path / "run")
    for h in hosts.values():
        order = [
            _first(h, p)
            for p in (
                "import fuse",
                f"^{ROOT}/powerfs/clusters/_powerfs/disk.py$",
                "_powerfs.mount serve",
                "dpkg -i",
                f"^{ROOT}/start.sh$",
                "nohup setsid /",
                "ctl .* sync",
            )
        ]
        assert order == sorted(order), f"order on {h.name}: {order}"
        [serve] = [t for t in h.commands() if "_powerfs.mount serve" in t]
        assert f"serve {ROOT}/disk/fs {ROOT}/data {ROOT}/powerfs/layer.sock" in serve
        assert f"echo $! >{ROOT}/powerfs/layer.pid" in serve
    assert json.loads((tmp_path / "run" / "cluster.json").read_text())["power_loss"] is True
    assert isinstance(c, PowerCuttable)


def test_a_power_cut_kills_the_server_then_has_the_layer_discard_the_unsynced(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    c = _cluster(hosts, tmp_path)
    c.start(tmp_path / "run")
    assert c.power_cut("n2") == {"/etcd/member/wal/0000000000000000-0000000000000000.wal": 4096}
    h = hosts["h2"]
    assert not h.running
    assert _first(h, "^kill -KILL 4242$") < _first(h, "_powerfs.mount ctl .* cut")


def test_stop_unmounts_the_layer_after_the_server_and_before_the_directory_goes(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    c = _cluster(hosts, tmp_path)
    c.start(tmp_path / "run")
    c.stop()
    for h in hosts.values():
        down = _first(h, f"umount {ROOT}/data")
        assert _first(h, "^kill -KILL 4242$") < down < _first(h, f"^rm -rf {ROOT}$")
        assert h.ran(f"kill -9 .*cat {ROOT}/powerfs/layer.pid|pid=\\$\\(cat {ROOT}/powerfs/")


def test_a_layer_that_stays_mounted_is_reported_and_the_rest_still_undone(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    c = _cluster(hosts, tmp_path)
    c.start(tmp_path / "run")
    hosts["h1"].on(f"umount {ROOT}/data", exit=1)
    with pytest.raises(ClusterError, match="could not unmount the power-loss layer") as e:
        c.stop()
    assert f"grep {ROOT}/data /proc/mounts" in str(e.value)
    assert all(h.ran(f"^rm -rf {ROOT}$") and not h.running for h in hosts.values())


@pytest.mark.parametrize(
    ("lacks", "says"),
    [
        ("/dev/fuse\n", "no usable /dev/fuse (modprobe fuse; in a container add --device"),
        ("python3-fuse\n", "no python3-fuse, the FUSE library the layer runs on (apt-get"),
    ],
)
def test_a_host_that_lacks_fuse_is_refused_in_one_line_before_any_install(
    hosts: dict[str, SimHost], tmp_path: Path, lacks: str, says: str
) -> None:
    hosts["h2"].on("import fuse", stdout=lacks)
    c = _cluster(hosts, tmp_path)
    with pytest.raises(ClusterError) as e:
        c.start(tmp_path / "run")
    line = str(e.value)
    assert line.startswith("root@h2:22: cannot cut the power here (--nemesis power-loss): ")
    assert says in line and line.endswith("; or run the target in Docker") and "\n" not in line
    assert not any(h.ran("dpkg -i|nohup setsid") for h in hosts.values())
    c.stop()
    assert all(h.ran(f"^rm -rf {ROOT}$") for h in hosts.values()), "what was set up is undone"


def test_a_host_where_the_mount_fails_is_refused_with_the_layer_s_own_words(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    hosts["h3"].on("_powerfs.mount serve", exit=1)
    hosts["h3"].on(
        r"^tail -n 20 \S+powerfs\.log$", stdout="fuse: mount failed: Permission denied\n"
    )
    c = _cluster(hosts, tmp_path)
    with pytest.raises(ClusterError) as e:
        c.start(tmp_path / "run")
    assert str(e.value) == (
        "root@h3:22: The power-loss layer did not mount on n3: fuse: mount failed: Permission "
        f"denied; {power.NEEDS}"
    )
    c.stop()
    assert hosts["h3"].ran(f"umount {ROOT}/data") and hosts["h3"].ran(f"^rm -rf {ROOT}$")


def test_without_the_fault_no_host_is_probed_and_a_power_cut_is_refused(
    hosts: dict[str, SimHost], tmp_path: Path
) -> None:
    c = _cluster(hosts, tmp_path, power_loss=False)
    c.start(tmp_path / "run")
    with pytest.raises(ClusterError, match="started without the power-loss layer"):
        c.power_cut("n1")
    c.stop()
    assert not any(h.ran("import fuse|_powerfs|umount") for h in hosts.values())
    assert not any("powerfs" in path for h in hosts.values() for path in h.files)


def test_the_option_checks_let_power_loss_over_ssh_through_to_the_probe() -> None:
    on_hosts = {"ssh": True, "ssh_hosts": ["h1"]}
    redis = RunOptions.of(target="redis", workload="lock", nemesis=["power-loss"], **on_hosts)
    check_target(resolve("redis"), redis)
    cluster = run_target.make_cluster(resolve("redis"), redis, RunClock())
    assert isinstance(cluster, SshCluster) and cluster.power_loss is True
    kill = RunOptions.of(target="redis", workload="lock", nemesis=["kill"], **on_hosts)
    plain = run_target.make_cluster(resolve("redis"), kill, RunClock())
    assert isinstance(plain, SshCluster) and plain.power_loss is False
    consul = RunOptions.of(target="consul", workload="lock", nemesis=["power-loss"], **on_hosts)
    with pytest.raises(OptionError, match="power-loss") as e:
        check_target(resolve("consul"), consul)  # a target without the layer, as in Docker
    assert "\n" not in str(e.value)


def test_down_unmounts_what_a_killed_harness_left_mounted() -> None:
    host = SimHost("h1")
    host.on(r"awk .*/proc/mounts", stdout=f"{ROOT}/data\n")
    report = cleanup.down_host(host)
    assert f"unmounted the power-loss layer at {ROOT}/data" in report.done
    assert not report.problems
    script = power.DOWN_ALL
    assert "umount -l" in script and "powerfs/layer.pid" in script
    assert power.site(Layout(ROOT)).pidfile == f"{ROOT}/powerfs/layer.pid"
