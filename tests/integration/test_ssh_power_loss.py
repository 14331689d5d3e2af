"""The power-loss fault over SSH (issue 34): ``harness run --ssh ... --nemesis power-loss``
on a stand-in host that can mount FUSE, and the one-line refusal of a host that cannot.

Redis, the target whose install over SSH is quickest (one host, one server package), on
one ``sshhost`` container (``sshlab``) started with ``/dev/fuse`` and ``SYS_ADMIN``: the
harness uploads the power-loss layer into the run's directory, mounts it over the data
directory before installing Redis, cuts the power as in Docker and records the bytes each
cut discarded in the history; at the end nothing is mounted and nothing of the run is left.
A host of the same image started without ``/dev/fuse`` is refused at setup in one line
that names what is missing and what to do, and nothing is left there either.

Marked nightly: the same on three hosts for etcd and ZooKeeper (their own configuration
written into the mounted data directory, a leader among the nodes cut).

Everything created carries ``harness=1`` and this module's ``harness.run`` label and is
removed by that label at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from sshlab import Lab, assert_clean, ssh_lab

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = f"sshpower-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""
SUBNET = "10.88.34.0/24"
"""Outside the 10.77.0.0/16 pool the Docker clusters take from, and not the other SSH
modules' (10.88.31.0/24, 10.88.32.0/24)."""
POWER_LOSS = (
    "--target redis --workload lock --persistence aof-everysec --nemesis power-loss "
    "--nemesis-interval 1 --time-limit 8 --recovery-time 1 --lease-ttl 3 --keepalive 1 "
    "--work-time 0.2 --seed 1"
)
"""Down 1 s in every 2 while the holders take and give the lock every few tenths of a
second: appends keep coming, and everysec fsyncs them once a second, so a cut finds some
not yet on disk."""


THREE_HOSTS = {
    "etcd": "--persistence fsync",
    "zookeeper": "--persistence force-sync",
}
"""The targets of the nightly runs on three hosts, each with its fsync setting's default."""
PROCESS = {"redis": "redis-server", "etcd": "etcd", "zookeeper": "java"}


def _run(lab: Lab, args: str, out: Path) -> subprocess.CompletedProcess[str]:
    """``harness run ARGS`` over SSH on the lab's hosts, as a person runs it."""
    ssh = (
        f"--ssh --nodes {','.join(lab.hosts())} --ssh-key {lab.key} "
        f"--ssh-known-hosts {lab.known_hosts} --ssh-install upload"
    )
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args.split(), *ssh.split(), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_power_cuts_over_ssh_record_what_they_discarded_and_leave_nothing_mounted(
    tmp_path: Path,
) -> None:
    with ssh_lab(RUN, tmp_path, 1, SUBNET, fuse=True) as lab:
        proc = _run(lab, POWER_LOSS, tmp_path / "out")
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        cuts = _cuts(tmp_path / "out" / "latest", "redis")
        assert any(sum(c["value"]["discarded"]["n1"].values()) > 0 for c in cuts), (
            "everysec leaves the last second's appends unsynced: some cut discarded bytes"
        )
        assert_clean(lab, PROCESS["redis"])


def _cuts(run_dir: Path, target: str) -> list[dict[str, Any]]:
    """The run's power cuts, each checked to carry its proof: the bytes it discarded per
    file on each node it cut; the run checked to have served the data through the layer."""
    history = (run_dir / "history.jsonl").read_text().splitlines()
    ops = [json.loads(line) for line in history]
    cuts = [op for op in ops if op["f"] == "start-power-loss" and op["type"] != "invoke"]
    assert cuts, "the run cut the power at least once"
    for cut in cuts:
        assert cut["type"] == "ok", cut
        nodes = cut["value"]["nodes"]
        assert cut["value"]["proof"] == {n: True for n in nodes}
        assert set(cut["value"]["discarded"]) == set(nodes)
        for discarded in cut["value"]["discarded"].values():
            assert all(isinstance(b, int) and b >= 0 for b in discarded.values()), cut
    cluster = json.loads((run_dir / "cluster.json").read_text())
    assert cluster["backend"] == "ssh" and cluster["power_loss"] is True
    assert cluster["target"] == target
    assert (run_dir / "nodes" / "n1" / "powerfs.log").exists()
    return cuts


@pytest.mark.nightly
@pytest.mark.parametrize("target", sorted(THREE_HOSTS))
def test_power_cuts_over_ssh_on_three_hosts(tmp_path: Path, target: str) -> None:
    args = (
        f"--target {target} --workload lock --nemesis power-loss --nemesis-target leader "
        f"{THREE_HOSTS[target]} --nemesis-interval 2 --time-limit 12 --recovery-time 2 "
        "--lease-ttl 10 --keepalive 3 --work-time 0.5 --accept-unavailable --seed 1"
    )
    with ssh_lab(f"{RUN}-{target}", tmp_path, 3, "10.88.35.0/24", fuse=True) as lab:
        proc = _run(lab, args, tmp_path / "out")
        # fsync on: nothing acknowledged is lost. A leader's cut may leave no lock operation
        # answered in its window (an election): accepted, and said so by stats.
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _cuts(tmp_path / "out" / "latest", target)
        assert_clean(lab, PROCESS[target])


def test_a_host_without_fuse_is_refused_in_one_line_and_left_as_it_was(tmp_path: Path) -> None:
    with ssh_lab(f"{RUN}-plain", tmp_path, 1, SUBNET) as lab:
        proc = _run(lab, POWER_LOSS, tmp_path / "out")
        assert proc.returncode == 254, proc.stdout + proc.stderr
        [line] = [x for x in proc.stderr.splitlines() if x.startswith("harness: ")]
        assert "cannot cut the power here (--nemesis power-loss): no usable /dev/fuse" in line
        assert "modprobe fuse" in line and "--device /dev/fuse" in line, line
        assert_clean(lab, "redis-server")
