"""The power-loss fault over SSH (issue 34): ``harness run --ssh ... --nemesis power-loss``
on a stand-in host that can mount FUSE, and the one-line refusal of a host that cannot.

Redis, the target whose install over SSH is quickest (one host, one server package), on
one ``sshhost`` container (``sshlab``) started with ``/dev/fuse`` and ``SYS_ADMIN``: the
harness uploads the power-loss layer into the run's directory, mounts it over the data
directory before installing Redis, cuts the power as in Docker and records the bytes each
cut discarded in the history; at the end nothing is mounted and nothing of the run is left.
A host of the same image started without ``/dev/fuse`` is refused at setup in one line
that names what is missing and what to do, and nothing is left there either. The two
take 25 s and 5 s here at load 3.3, 32 s and 8 s at load 6.4 (``--durations``).

Marked nightly: the same on three hosts for etcd and ZooKeeper (ZooKeeper's myid written
into the mounted data directory, the leader's power cut), and ``harness clusters down
--ssh`` taking down the layer of a cluster a killed harness left mounted. PostgreSQL on the
FUSE host: a lock run whose primary loses power, valid under PostgreSQL's default
``synchronous_commit = on`` (82-101 s at load 8.6-8.8, 3 of 3 passed), and the server's
own ``pg_settings``: every durability setting its default, the data directory and its WAL
on the layer (54 s at load 8.6); and a primary with two replicas on three hosts, the
primary's power cut, valid (115 s at load 10.6).

Everything created carries ``harness=1`` and this module's ``harness.run`` label and is
removed by that label at the end.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sshlab import Lab, assert_clean, ssh_lab
from test_power_loss import proven_cuts

from clusters.postgres.connection import conninfo
from clusters.postgres.server import DURABILITY_DEFAULTS
from clusters.ssh.factory import make_ssh_cluster
from clusters.ssh.process import Layout

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = f"sshpower-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""
SUBNET = "10.88.34.0/24"
"""The FUSE host's: outside the 10.77.0.0/16 pool the Docker clusters take from, and not the
other SSH modules' (10.88.31.0/24, 10.88.32.0/24)."""
PLAIN_SUBNET = "10.88.36.0/24"
"""The host without FUSE's (the FUSE host may still be up)."""
THREE_SUBNET = "10.88.35.0/24"
"""The three hosts' of the nightly runs."""
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
    "postgres": "--persistence async",
}
"""The targets of the nightly runs on three hosts, each with its fsync setting's default
(PostgreSQL's: a primary and two replicas, its own synchronous_commit on)."""
PROCESS = {"redis": "redis-server", "etcd": "etcd", "zookeeper": "java", "postgres": "postgres"}


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


@pytest.fixture(scope="module")
def fuse_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """One stand-in host that can mount FUSE, for this module's Redis tests."""
    with ssh_lab(RUN, tmp_path_factory.mktemp("fuse-lab"), 1, SUBNET, fuse=True) as lab:
        yield lab


def test_power_cuts_over_ssh_record_what_they_discarded_and_leave_nothing_mounted(
    fuse_lab: Lab, tmp_path: Path
) -> None:
    proc = _run(fuse_lab, POWER_LOSS, tmp_path / "out")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    cuts = _cuts(tmp_path / "out" / "latest", "redis")
    assert any(sum(c["value"]["discarded"]["n1"].values()) > 0 for c in cuts), (
        "everysec leaves the last second's appends unsynced: some cut discarded bytes"
    )
    assert_clean(fuse_lab, PROCESS["redis"])


@pytest.mark.nightly
def test_down_takes_the_layer_down_when_the_harness_could_not(
    fuse_lab: Lab, tmp_path: Path
) -> None:
    """A cluster started with the layer and never stopped (the harness killed): ``harness
    clusters down --ssh`` unmounts it and ends its process before removing the run."""
    cluster = make_ssh_cluster(
        "redis", fuse_lab.hosts(), fuse_lab.options(f"{RUN}-kept", power_loss=True)
    )
    cluster.start(tmp_path)
    mounts = fuse_lab.docker[0].run("grep ' fuse' /proc/mounts", sudo=True).stdout
    assert "/var/lib/harness/" in mounts, "the layer was mounted"
    login = ["--ssh", "--nodes", ",".join(fuse_lab.hosts()), "--ssh-key", str(fuse_lab.key)]
    down = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "clusters",
            "down",
            *login,
            "--ssh-known-hosts",
            str(fuse_lab.known_hosts),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert down.returncode == 0, down.stdout + down.stderr
    assert "unmounted the power-loss layer at /var/lib/harness/" in down.stdout, down.stdout
    assert_clean(fuse_lab, PROCESS["redis"])


def _cuts(run_dir: Path, target: str) -> list[dict[str, Any]]:
    """The run's power cuts, each with its proof (``proven_cuts``), the run checked to have
    run ``target`` over SSH."""
    cuts = proven_cuts(run_dir)
    cluster = json.loads((run_dir / "cluster.json").read_text())
    assert (cluster["backend"], cluster["target"]) == ("ssh", target), cluster
    return cuts


@pytest.mark.nightly
@pytest.mark.parametrize("target", sorted(THREE_HOSTS))
def test_power_cuts_over_ssh_on_three_hosts(tmp_path: Path, target: str) -> None:
    args = (
        f"--target {target} --workload lock --nemesis power-loss --nemesis-target leader "
        f"{THREE_HOSTS[target]} --nemesis-interval 2 --time-limit 12 --recovery-time 2 "
        "--lease-ttl 10 --keepalive 3 --work-time 0.5 --accept-unavailable --seed 1"
    )
    with ssh_lab(f"{RUN}-{target}", tmp_path, 3, THREE_SUBNET, fuse=True) as lab:
        proc = _run(lab, args, tmp_path / "out")
        # fsync on: nothing acknowledged is lost. A leader's cut may leave no lock operation
        # answered in its window (an election): accepted, and said so by stats.
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _cuts(tmp_path / "out" / "latest", target)
        assert_clean(lab, PROCESS[target])


def test_a_host_without_fuse_is_refused_in_one_line_and_left_as_it_was(tmp_path: Path) -> None:
    with ssh_lab(f"{RUN}-plain", tmp_path, 1, PLAIN_SUBNET) as lab:
        proc = _run(lab, POWER_LOSS, tmp_path / "out")
        assert proc.returncode == 254, proc.stdout + proc.stderr
        [line] = [x for x in proc.stderr.splitlines() if x.startswith("harness: ")]
        assert "cannot cut the power here (--nemesis power-loss): no usable /dev/fuse" in line
        assert "modprobe fuse" in line and "--device /dev/fuse" in line, line
        assert_clean(lab, "redis-server")


PG_POWER_LOSS = (
    "--target postgres --workload lock --lock table --nemesis power-loss --nemesis-target n1 "
    "--nemesis-interval 2 --time-limit 14 --recovery-time 2 --concurrency 3 --lease-ttl 10 "
    "--keepalive 5 --work-time 2 --op-timeout 8 --accept-unavailable --seed 1"
)
"""The nightly suite's ``postgres-table-power-loss`` on one host, shorter: the primary (the
only node) loses power for 2 s in every 4 while holders take the lock's row and its token
from a sequence, committed under PostgreSQL's default ``synchronous_commit = on``."""


@pytest.mark.nightly
def test_postgres_power_cuts_over_ssh_lose_no_committed_grant(
    fuse_lab: Lab, tmp_path: Path
) -> None:
    """A COMMIT is answered once its WAL is flushed, so a power cut takes only what was not
    yet flushed (data pages a checkpoint had not synced, files rewritten at each start): the
    cut discards bytes under the data directory, crash recovery replays the WAL, and no
    grant or token is lost: the run is valid, by the recorded rule."""
    proc = _run(fuse_lab, PG_POWER_LOSS, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = tmp_path / "out" / "latest"
    cuts = _cuts(run_dir, "postgres")
    discarded = [f for c in cuts for f, b in c["value"]["discarded"]["n1"].items() if b > 0]
    assert discarded, "a cut discarded what PostgreSQL had written and not fsynced"
    assert all(f.startswith("/pgdata/") for f in discarded), discarded
    test = json.loads((run_dir / "test.json").read_text())
    [rule] = test["service_rules"]
    assert (rule["setting"], rule["value"], rule["default"], rule["lost_within_s"]) == (
        "synchronous_commit",
        "on",
        None,  # PostgreSQL's own default, not a setting the harness changed
        0.0,
    )
    checkers = json.loads((run_dir / "results.json").read_text())["checkers"]
    assert checkers["mutex"]["valid"] is True and checkers["fencing"]["valid"] is True
    assert_clean(fuse_lab, "postgres")


@pytest.mark.nightly
def test_postgres_over_ssh_keeps_the_default_durability_on_the_layer(
    fuse_lab: Lab, tmp_path: Path
) -> None:
    """What the server itself says: the settings that decide durability come from no file
    or command line of ours, and its data directory, WAL included, is on the layer."""
    cluster = make_ssh_cluster(
        "postgres", fuse_lab.hosts(), fuse_lab.options(f"{RUN}-pg", power_loss=True)
    )
    try:
        cluster.start(tmp_path)
        info = conninfo(list(cluster.endpoints().values()), 5.0)
        with psycopg.connect(info, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT name, setting, source FROM pg_settings WHERE name = ANY(%s) "
                "OR source IN ('configuration file', 'command line')",
                [list(DURABILITY_DEFAULTS)],
            ).fetchall()
            [(data_dir,)] = conn.execute("SHOW data_directory").fetchall()
        settings = {name: (setting, source) for name, setting, source in rows}
        assert {k: settings[k] for k in DURABILITY_DEFAULTS} == {
            k: (v, "default") for k, v in DURABILITY_DEFAULTS.items()
        }
        ours = {k for k, (_, source) in settings.items() if source == "configuration file"}
        assert "shared_buffers" in ours, f"the server read our postgresql.conf: {ours}"
        layer = Layout.for_run(f"{RUN}-pg").data
        assert data_dir == f"{layer}/pgdata"
        host = fuse_lab.docker[0]
        assert f" {layer} fuse" in host.run("cat /proc/mounts", sudo=True).stdout
        assert host.run(f"test -d {data_dir}/pg_wal && ! test -L {data_dir}/pg_wal").ok
    finally:
        cluster.stop()
    assert_clean(fuse_lab, "postgres")
