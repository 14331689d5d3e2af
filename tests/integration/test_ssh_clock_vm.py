"""Clock faults over SSH that really move a host's clock: a virtual machine's, never ours.

The SSH test hosts of ``test_ssh_etcd.py`` are containers: they share this machine's
kernel clock, so the harness refuses to set it there. A qemu guest runs a kernel and a
clock of its own, so here the host clock nemesis runs for real, against one disposable VM
(``tests/support/vmhost``: Debian with systemd, sshd and systemd-timesyncd, on a private bridge
with no way out; KVM where it works, else TCG). Shown, with measurements logged at INFO
(``-o log_cli=true --log-cli-level=INFO``):

- the identity check accepts the guest (another boot id, machine-id and address) and still
  refuses loopback and a process sharing our kernel, as a container does;
- etcd installed over SSH on the guest (a one-node SSH cluster);
- a bump of ``DELTA`` s moves the guest's offset to this machine by ``DELTA``, etcd's own
  log timestamps jump by the same, a reset brings both back, and a strobe flips the guest
  between its baseline and ``DELTA`` ahead;
- this machine's clock does not move: its wall-clock and monotonic deltas across the
  faults agree;
- systemd-timesyncd is stopped for the fault and running again afterwards;
- stopping leaves the guest clean, and a whole ``harness run --ssh --nemesis clock`` on it
  is valid and records the guest's offsets in its history.

Opt-in (minutes): ``HARNESS_REQUIRE_VM=1`` (``tests/conftest.py``).
"""

from __future__ import annotations

import base64
import json
import logging
import statistics
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import requests
from sshlab import host_leftovers

from clusters.remote.base import Command, Exec, Remote, get_text
from clusters.remote.clock_shell import STROBE_PATTERN
from clusters.remote.identity import READ_IDS, identity_of, local_identity, same_machine
from clusters.ssh.cluster import LeadingSshCluster
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from clusters.ssh.packages import installed_packages
from core.client import Invocation
from nemesis.faketime_skew import START, STOP
from nemesis.host_skew import TOLERANCE_S, HostClock
from tests.support.vmhost.image import ensure_image
from tests.support.vmhost.vm import VmLab, vm_lab

pytestmark = [pytest.mark.vm, pytest.mark.slow]

log = logging.getLogger(__name__)
RUN = f"vmclock-{uuid.uuid4().hex[:6]}"
DELTA = 90.0
"""The bump, seconds: far beyond any measurement error or boot-time clock skew."""
OUR_DRIFT_S = 0.25
"""How far this machine's wall clock may drift from its monotonic clock during the test."""


class OurClock:
    """This machine's wall clock against its monotonic clock: a step of the wall clock
    (which a clock fault leaking here would be) shows as their deltas disagreeing."""

    def __init__(self) -> None:
        self.wall, self.mono = time.time(), time.monotonic()
        self.drifts: list[float] = []

    def drift(self) -> float:
        """Wall-clock time elapsed minus monotonic time elapsed since creation, seconds."""
        d = (time.time() - self.wall) - (time.monotonic() - self.mono)
        self.drifts.append(d)
        return d


def exec_of(remote: Remote) -> Exec:
    def run(cmd: Command) -> tuple[int, str]:
        result = remote.run(cmd, sudo=True)
        return result.exit, result.output

    return run


def guest_offset(remote: Remote, samples: int = 5) -> float:
    """The guest's clock minus ours, seconds: ``date`` read over SSH, compared with the
    midpoint of the round trip of the fastest of ``samples`` reads (error < half of it)."""
    best: tuple[float, float] | None = None
    for _ in range(samples):
        before = time.time()
        out = remote.run(["date", "+%s.%N"]).stdout
        after = time.time()
        reading = (after - before, float(out) - (before + after) / 2)
        best = reading if best is None or reading < best else best
    assert best is not None
    return best[1]


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def etcd_log_offset(etcd: LeadingSshCluster) -> float:
    """What etcd's own clock reads minus ours, seconds, from its log: a compaction is
    requested (at a fresh revision, so its log line is unique) and the ``ts`` etcd logged
    for it is compared with the midpoint of the request (etcd logs milliseconds)."""
    url = f"http://{etcd.endpoints()['n1']}/v3/kv"
    put = requests.post(f"{url}/put", json={"key": b64("tick"), "value": b64(RUN)}, timeout=5)
    revision = int(put.json()["header"]["revision"])
    before = time.time()
    requests.post(
        f"{url}/compaction", json={"revision": revision, "physical": True}, timeout=5
    ).raise_for_status()
    after = time.time()
    for line in get_text(etcd.remote("n1"), etcd.layout.log).splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if "compact" in str(entry.get("msg")) and revision in (
            entry.get("revision"),
            entry.get("compact-revision"),
        ):
            logged = datetime.fromisoformat(entry["ts"]).timestamp()
            return logged - (before + after) / 2
    raise AssertionError(f"etcd logged no compaction at revision {revision}")


def timesyncd(remote: Remote) -> str:
    return remote.run(["systemctl", "is-active", "systemd-timesyncd"]).stdout.strip()


def near(value: float, expected: float) -> bool:
    return abs(value - expected) <= TOLERANCE_S


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VmLab]:
    started = time.monotonic()
    image, built = ensure_image(log.info)
    ready = time.monotonic()
    log.info(
        "VM image %s in %.1f s: %s",
        "built" if built else "cached",
        ready - started,
        image.directory,
    )
    with vm_lab(image, 1, tmp_path_factory.mktemp("vm")) as running:
        log.info("VM booted (%s), sshd up in %.1f s", running.accel, time.monotonic() - ready)
        yield running


@pytest.fixture(scope="module")
def guest(lab: VmLab) -> Iterator[Remote]:
    """Our own SSH connection to the guest, apart from the cluster's."""
    remote = lab.remote(0)
    yield remote
    remote.close()


@pytest.fixture(scope="module")
def packages(guest: Remote) -> set[str]:
    """The guest's packages at boot (what every run must leave behind)."""
    return installed_packages(guest, partly=True)


@pytest.fixture(scope="module")
def baseline(guest: Remote) -> float:
    """The guest's clock offset to ours before any fault (its RTC is whole seconds)."""
    offset = guest_offset(guest)
    log.info("guest offset at boot: %+.3f s", offset)
    return offset


def test_the_guest_is_another_machine_and_our_refusals_still_hold(
    lab: VmLab, guest: Remote, baseline: float
) -> None:
    ip, ours = lab.guests[0].ip, local_identity()
    theirs = identity_of(exec_of(guest))
    assert theirs.machine_id == lab.guests[0].machine_id != ours.machine_id
    assert theirs.boot_id and theirs.boot_id != ours.boot_id
    assert same_machine(ip, theirs, ours) is None
    # The same check still refuses loopback, and a process in namespaces of its own on this
    # kernel (what a container is: it reads our machine's boot id).
    assert "belongs to this machine" in str(same_machine("127.0.0.1", theirs, ours))
    boxed = subprocess.run(
        ["unshare", "--uts", "--ipc", "--pid", "--fork", "--mount-proc", "sh", "-c", READ_IDS],
        capture_output=True,
        text=True,
        check=True,
    )
    contained = identity_of(lambda _: (0, boxed.stdout))
    assert contained.boot_id == ours.boot_id
    assert same_machine(ip, contained, ours) is not None
    # A real host: systemd is init, the time service runs, and no route leads out.
    assert guest.run(["cat", "/proc/1/comm"]).stdout.strip() == "systemd"
    assert timesyncd(guest) == "active"
    assert "default" not in guest.run(["ip", "route"]).stdout


@pytest.fixture(scope="module")
def etcd(lab: VmLab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeadingSshCluster]:
    c = make_ssh_cluster(
        "etcd",
        lab.hosts(),
        SshClusterOptions(
            run_id=f"{RUN}-etcd",
            key=str(lab.image.key),
            known_hosts=str(lab.known_hosts),
            install="upload",
        ),
    )
    assert isinstance(c, LeadingSshCluster)
    try:
        started = time.monotonic()
        c.start(tmp_path_factory.mktemp("run-etcd"))
        log.info("etcd installed over SSH and serving in %.1f s", time.monotonic() - started)
        yield c
    finally:
        c.stop()


def test_a_bump_and_a_strobe_move_the_guest_and_etcd_but_not_us(
    etcd: LeadingSshCluster, guest: Remote, baseline: float
) -> None:
    ours = OurClock()
    etcd_base = etcd_log_offset(etcd)
    log.info("before: guest %+.3f s, etcd's log %+.3f s", baseline, etcd_base)
    assert near(etcd_base, baseline)
    nem = HostClock(etcd, "n1", delta=DELTA)  # not refused: the guest is another machine
    try:
        bump = nem.invoke(Invocation(START, {"target": "n1", "delta": DELTA}))
        assert bump.type == "ok", bump
        bumped, etcd_bumped = guest_offset(guest), etcd_log_offset(etcd)
        log.info(
            "bump %+.0f s: guest %+.3f s, etcd's log %+.3f s, nemesis saw %s -> %s; "
            "timesyncd %s; our drift %+.4f s",
            DELTA,
            bumped,
            etcd_bumped,
            bump.value["before"]["n1"],
            bump.value["offsets"]["n1"],
            timesyncd(guest),
            ours.drift(),
        )
        assert near(bumped, baseline + DELTA) and near(etcd_bumped, etcd_base + DELTA)
        assert near(bump.value["offsets"]["n1"], bump.value["before"]["n1"] + DELTA)
        assert timesyncd(guest) == "inactive", "the time service would undo the fault"
        assert etcd.is_healthy("n1")

        reset = nem.invoke(Invocation(STOP))
        assert reset.type == "ok", reset
        back, etcd_back = guest_offset(guest), etcd_log_offset(etcd)
        log.info(
            "reset: guest %+.3f s, etcd's log %+.3f s; our drift %+.4f s",
            back,
            etcd_back,
            ours.drift(),
        )
        assert near(back, baseline) and near(etcd_back, etcd_base)

        strobe = nem.invoke(
            Invocation(
                START,
                {"target": "n1", "delta": DELTA, "mode": "strobe", "period": 1.0, "duration": 8.0},
            )
        )
        assert strobe.type == "ok", strobe
        samples = []
        until = time.monotonic() + 5.0  # stopped mid-strobe: the reset must still restore
        while time.monotonic() < until:
            samples.append(guest_offset(guest, samples=1))
        ahead = [s for s in samples if near(s, baseline + DELTA)]
        at_base = [s for s in samples if near(s, baseline)]
        log.info(
            "strobe: %d samples, %d ahead (median %+.3f s), %d at baseline, %d between; "
            "our drift %+.4f s",
            len(samples),
            len(ahead),
            statistics.median(ahead or [0]),
            len(at_base),
            len(samples) - len(ahead) - len(at_base),
            ours.drift(),
        )
        assert len(ahead) >= 2 and len(at_base) >= 2, samples
        stopped = nem.invoke(Invocation(STOP))
        assert stopped.type == "ok", stopped
    finally:
        nem.teardown()
    final = guest_offset(guest)
    log.info(
        "after teardown: guest %+.3f s (baseline %+.3f s), timesyncd %s; our drift: "
        "max %.4f s over %.1f s",
        final,
        baseline,
        timesyncd(guest),
        max(abs(d) for d in [*ours.drifts, ours.drift()]),
        time.monotonic() - ours.mono,
    )
    assert near(final, baseline)
    assert timesyncd(guest) == "active", "the time service must run again after the fault"
    assert not guest.run(["pgrep", "-f", STROBE_PATTERN]).ok, "the strobe loop is gone"
    assert max(abs(d) for d in ours.drifts) < OUR_DRIFT_S, "this machine's clock moved"


def clock_leftovers(guest: Remote, packages: set[str]) -> list[str]:
    """What a run with clock faults left on the guest (``host_leftovers``, a strobe loop, a
    time service not running again, a clock off its baseline): empty when clean."""
    found = host_leftovers(guest, packages, "etcd")
    if guest.run(["pgrep", "-f", STROBE_PATTERN]).ok:
        found.append("a strobe loop")
    if timesyncd(guest) != "active":
        found.append(f"systemd-timesyncd {timesyncd(guest)}")
    return found


def test_stop_leaves_the_guest_clean(
    etcd: LeadingSshCluster, guest: Remote, baseline: float, packages: set[str]
) -> None:
    etcd.stop()
    assert clock_leftovers(guest, packages) == []
    assert near(guest_offset(guest), baseline)


def test_a_whole_run_with_clock_faults_on_the_guest(
    lab: VmLab, guest: Remote, baseline: float, packages: set[str], tmp_path: Path
) -> None:
    from harness.cli import main

    started = time.monotonic()
    ours = OurClock()
    # A light load: on a slow (emulated) guest a busy CPU delays the nemesis's SSH reads of
    # the clock, and their error grows with the delay.
    code = main(
        [
            "run",
            "--ssh",
            "--nodes",
            lab.hosts()[0],
            "--target",
            "etcd",
            "--workload",
            "cas-register",
            "--nemesis",
            "clock",
            "--nemesis-interval",
            "4",
            "--time-limit",
            "20",
            "--recovery-time",
            "3",
            "--concurrency",
            "2",
            "--rate",
            "10",
            "--seed",
            "3",
            "--ssh-key",
            str(lab.image.key),
            "--ssh-known-hosts",
            str(lab.known_hosts),
            "--ssh-install",
            "upload",
            "--out-dir",
            str(tmp_path),
        ]
    )
    assert code == 0, "the run's verdict is valid"
    run_dir = next(tmp_path.glob("*/*/test.json")).parent
    results = json.loads((run_dir / "results.json").read_text())
    assert results["valid"] is True
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    bumps = [op for op in ops if op["f"] == START and op["type"] == "ok"]
    resets = [op for op in ops if op["f"] == STOP and op["type"] == "ok"]
    assert bumps and resets, "the run bumped and reset the guest's clock"
    for op in bumps:
        v = op["value"]
        assert near(v["offsets"]["n1"], v["before"]["n1"] + v["delta"]), op
    for op in resets:
        assert near(op["value"]["offsets"]["n1"], op["value"]["baseline"]["n1"]), op
    cluster = json.loads((run_dir / "cluster.json").read_text())
    assert near(cluster["clock_offsets_s"]["n1"], baseline)
    log.info(
        "harness run: %d bumps (%s s), %d resets, valid, %.1f s; our drift %+.4f s",
        len(bumps),
        [op["value"]["delta"] for op in bumps],
        len(resets),
        time.monotonic() - started,
        ours.drift(),
    )
    assert abs(ours.drift()) < OUR_DRIFT_S
    assert clock_leftovers(guest, packages) == []
    assert near(guest_offset(guest), baseline)
