"""Locks and Consul on real sshd hosts, and cleaning hosts after a harness killed mid-fault.

Three ``sshhost`` containers (``sshlab``: Debian trixie with sshd and a sudo user, strict
host keys) on an internal network of this module's own; the hosts reach no mirror, so
etcd's and Consul's .debs are resolved and downloaded on this machine and uploaded (Consul
from bullseye: trixie has none). Each whole run is a short ``harness run`` over SSH and
must come out as the same options do in Docker:

- etcd's lease lock with fencing under partition, pause and kill: valid; under a client
  pause longer than its lease (suites/locks.toml's options) without fencing: invalid, the
  resource accepted the paused holder's stale write; with fencing: valid;
- Consul installed on the hosts: its session lock with fencing under a client pause
  longer than its session TTL (suites/locks.toml's ``consul-session-fenced``) and the
  cas-register with ``consistent`` reads under partitions: valid.

(Consul's session lock under *partitions* is not asserted: once a partition heals, the
servers' gossip can mark a healthy agent's ``serfHealth`` critical for a moment, which
invalidates the sessions of that agent's node at once, TTL notwithstanding; a client that
had just acquired the lock then writes after another was granted it. Seen here once with
a 5 s partition of one node.)

Then ``harness run --ssh`` as a process, killed with SIGKILL while its partition is in
effect (and, as if a pause fault were frozen too, a server stopped): ``harness clusters
heal --ssh`` clears the faults and leaves the servers serving, ``harness clusters down
--ssh`` leaves every host as it was before the module (``sshlab.leftovers``).

Everything created carries ``harness=1`` and this module's ``harness.run`` label and is
removed by that label at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from sshlab import Lab, leftovers, ssh_lab, whole_run

from clusters._probe import wait_until
from clusters.remote.clock_shell import RECORD
from core.options import RunOptions
from harness.suite import SuiteRun, judge

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = f"sshruns-{uuid.uuid4().hex[:6]}"
"""This module's run label: everything it creates carries ``harness.run=RUN``."""
SUBNET = "10.88.31.0/24"
"""Outside the 10.77.0.0/16 pool the clusters and the other SSH tests take from."""
LOCKS = {
    "workload": "lock",
    "time_limit": 12,
    "recovery_time": 2,
    "lease_ttl": 2,
    "keepalive": 0.5,
    "work_time": 0.1,
    "acquire_wait": 1,
    "pause_at": 3,
    "pause_for": 6,
    "seed": 5,
}
"""suites/locks.toml's defaults: a client pause (6 s) longer than the lease (2 s)."""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with ssh_lab(RUN, tmp=tmp_path_factory.mktemp("ssh-lab"), hosts=3, subnet=SUBNET) as hosts:
        yield hosts


def checked(outcome: Any, name: str, expect: str, violation: str | None = None) -> str:
    """Judge a run as a suite would (``harness.suite.judge``); the sentence, after
    asserting the expectation is met and that it ran over SSH."""
    info = json.loads((outcome.run_dir / "cluster.json").read_text())
    assert info["backend"] == "ssh", info
    results = json.loads((outcome.run_dir / "results.json").read_text())
    summaries = {n: (c["valid"], c["summary"]) for n, c in results["checkers"].items()}
    met, why = judge(SuiteRun(name, RunOptions.of(), expect, violation), results)
    assert met, f"{why}: {summaries}"
    return why


def assert_clean(lab: Lab, process: str) -> None:
    for i in range(len(lab.docker)):
        assert not leftovers(lab, i, process), lab.ips[i]


# -- etcd's lock over SSH ---------------------------------------------------------------------


def test_etcd_lease_lock_with_fencing_is_valid_under_partition_pause_and_kill(
    lab: Lab, tmp_path: Path
) -> None:
    # The three faults take turns, each on for half the time on a node of its own choice,
    # so at times two of the three members are out and nothing can succeed (one run in
    # three here): that window proves nothing, and the run is about safety, so it is
    # accepted (said out loud in the verdict) rather than made unknown.
    opts = RunOptions.of(
        target="etcd",
        lock="lease-lock",
        fencing=True,
        nemesis=["partition", "pause", "kill"],
        nemesis_interval=4,
        out_dir=str(tmp_path),
        accept_unavailable=True,
        **{**LOCKS, "time_limit": 16},
    )
    outcome = whole_run(lab, opts)
    checked(outcome, "etcd-lock-faults", "valid")
    results = json.loads((outcome.run_dir / "results.json").read_text())
    for name in ("mutex", "fencing", "mutex-linearizability", "faults"):
        assert results["checkers"][name]["valid"] is True, name
    assert_clean(lab, "etcd")


@pytest.mark.parametrize(
    ("fencing", "expect", "violation"),
    [
        (False, "invalid", "stale-write-accepted"),
        (True, "valid", None),
    ],
)
def test_etcd_lease_lock_under_a_pause_longer_than_the_lease(
    lab: Lab, tmp_path: Path, fencing: bool, expect: str, violation: str | None
) -> None:
    opts = RunOptions.of(
        target="etcd",
        lock="lease-lock",
        fencing=fencing,
        nemesis=["client-pause"],
        out_dir=str(tmp_path),
        **LOCKS,
    )
    outcome = whole_run(lab, opts)
    checked(outcome, f"etcd-lease-lock-fencing-{fencing}", expect, violation)
    assert outcome.exit_code == (1 if expect == "invalid" else 0)
    assert_clean(lab, "etcd")


# -- Consul over SSH ------------------------------------------------------------------------------


def test_consul_session_lock_with_fencing_is_valid_under_a_long_client_pause(
    lab: Lab, tmp_path: Path
) -> None:
    opts = RunOptions.of(
        target="consul",
        fencing=True,
        nemesis=["client-pause"],
        out_dir=str(tmp_path),
        **{**LOCKS, "pause_for": 8},
    )
    outcome = whole_run(lab, opts)
    checked(outcome, "consul-session-fenced", "valid")
    test = json.loads((outcome.run_dir / "test.json").read_text())
    assert test["versions"]["consul"] == "Consul v1.8.7"
    info = json.loads((outcome.run_dir / "cluster.json").read_text())
    assert "consul" in info["nodes"]["n1"]["installed"], "installed for the run (upload)"
    assert_clean(lab, "consul")


def test_consul_cas_register_with_consistent_reads_is_valid_under_partitions(
    lab: Lab, tmp_path: Path
) -> None:
    opts = RunOptions.of(
        target="consul",
        workload="cas-register",
        read_mode="consistent",
        nemesis=["partition"],
        nemesis_target="one",
        nemesis_interval=5,
        time_limit=15,
        recovery_time=3,
        concurrency=3,
        out_dir=str(tmp_path),
        seed=1,
    )
    checked(whole_run(lab, opts), "consul-cas-consistent-partition", "valid")
    assert_clean(lab, "consul")


# -- cleaning up after a harness killed mid-fault --------------------------------------------------


def harness(*argv: str, log: Path) -> subprocess.Popen[bytes]:
    """``harness ARGV`` as a process of its own group, its output appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "harness.cli", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=Path(__file__).parents[2],
        )


def login(lab: Lab) -> list[str]:
    return [
        "--ssh",
        "--nodes",
        ",".join(lab.hosts()),
        "--ssh-key",
        str(lab.key),
        "--ssh-known-hosts",
        str(lab.known_hosts),
    ]


def rules(lab: Lab, i: int) -> list[str]:
    return [
        line
        for line in lab.docker[i].run("iptables -S", sudo=True).stdout.splitlines()
        if "harness-" in line
    ]


def test_heal_then_down_undo_what_a_killed_run_left(lab: Lab, tmp_path: Path) -> None:
    log = tmp_path / "harness.log"
    run = harness(
        "run",
        *login(lab),
        "--ssh-install",
        "upload",
        "--target",
        "etcd",
        "--workload",
        "cas-register",
        "--nemesis",
        "partition",
        "--nemesis-interval",
        "4",
        "--time-limit",
        "120",
        "--seed",
        "3",
        "--out-dir",
        str(tmp_path / "results"),
        log=log,
    )
    try:
        faulted = wait_until(lambda: any(rules(lab, i) for i in range(3)), 180, 0.5)
        assert faulted, f"no partition within 180 s; {log.read_text()[-2000:]}"
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(10)
    time.sleep(1)  # the workers follow their runner (PR_SET_PDEATHSIG)
    assert any(rules(lab, i) for i in range(3)), "the partition outlived the harness"
    paused = lab.docker[1]
    assert paused.run("pkill -STOP -x etcd", sudo=True).ok  # as a frozen pause fault would
    paused.run(
        f"printf '%s\\n' '{json.dumps({'stopped': [], 'baseline_offset_s': 0.0})}' > {RECORD}",
        sudo=True,
    )  # a clock fault's note (no clock is ever set here)
    cluster = json.loads(next((tmp_path / "results").rglob("cluster.json")).read_text())

    heal = subprocess.run(
        [sys.executable, "-m", "harness.cli", "clusters", "heal", *login(lab)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert heal.returncode == 0, heal.stdout + heal.stderr
    assert "resumed etcd" in heal.stdout and "firewall rule(s)" in heal.stdout, heal.stdout
    for i in range(3):
        assert not rules(lab, i)
        state = lab.docker[i].run("ps -o stat= -C etcd").stdout.strip()
        assert state and not state.startswith("T"), f"h{i + 1}: etcd {state!r}"
    assert not paused.run(f"test -e {RECORD}").ok
    assert wait_until(lambda: all(etcd_healthy(ip) for ip in lab.ips), 30, 0.5), (
        "healed, the servers serve again"
    )

    down = subprocess.run(
        [sys.executable, "-m", "harness.cli", "clusters", "down", *login(lab)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert down.returncode == 0, down.stdout + down.stderr
    assert "purged" in down.stdout and f"removed {cluster['directory']}" in down.stdout
    assert_clean(lab, "etcd")
    again = subprocess.run(
        [sys.executable, "-m", "harness.cli", "clusters", "down", *login(lab)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and again.stdout.count("nothing to undo") == 3, again.stdout


def etcd_healthy(ip: str) -> bool:
    try:
        return bool(requests.get(f"http://{ip}:2379/health", timeout=2).json()["health"] == "true")
    except (requests.RequestException, ValueError, KeyError):
        return False
