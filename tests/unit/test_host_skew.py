"""The host clock nemesis on simulated hosts: refusals, NTP held and restored, bumps,
strobes, resets to the baseline, and the commands that would run on a real host.

Each ``ClockHost`` is a ``FakeRemote`` with a clock offset that the shift commands move
(parsed from the very script that would run there), so the nemesis's measurements and
proofs are exercised end to end while no clock is ever set: nothing is executed. The
cluster is the real SSH cluster of etcd (never started) over those fakes; its addresses are
in TEST-NET-3 (203.0.113.0/24), which only a local bind test ever looks at.
"""

from __future__ import annotations

import json
import re
import shlex
import time

import pytest

from clusters.etcd.server import SERVER
from clusters.remote.base import CommandResult
from clusters.remote.clock_shell import RECORD
from clusters.remote.hosts import HostSpec
from clusters.remote.identity import MachineIdentity
from clusters.ssh.cluster import LeadingSshCluster
from core.client import Invocation
from core.cluster import ClusterError
from nemesis.faketime_skew import ClockSkew
from nemesis.host_skew import STROBE_MARK, HostClock, HostNodes, RefusedHost, clock_nemesis
from tests.support.fake import FakeRemote

OURS = MachineIdentity("our-machine-id", "our-boot-id")
OK = CommandResult(0, "", "")


class ClockHost(FakeRemote):
    """A host with its own clock offset, time services and strobe loop."""

    def __init__(
        self,
        name: str,
        boot_id: str | None = None,
        machine_id: str | None = None,
        services: str = "systemd systemd-timesyncd\n",
    ) -> None:
        super().__init__(f"root@{name}:22")
        self.offset = 0.0
        self.strobing = False
        self.ntp_running = bool(services)
        self.on(
            r"machine-id=",
            stdout=f"machine-id={machine_id or 'mid-' + name}\n"
            f"boot-id={boot_id or 'boot-' + name}\n",
        )
        self.on(
            r"^date \+%s\.%N$",
            respond=lambda _: CommandResult(0, f"{time.time() + self.offset:.9f}\n", ""),
        )
        self.on(r"^n=\$\(date \+%s%N\)", respond=self._shift)
        self.on(r"systemctl is-active", stdout=services)
        self.on(r"^systemctl (stop|start) ", respond=self._ntp)
        self.on(r"^setsid nohup sh -c", respond=self._strobe)
        self.on(r"^pgrep -f ", respond=lambda _: OK if self.strobing else CommandResult(1, "", ""))
        self.on(r"^pkill -f ", respond=self._unstrobe)

    def _shift(self, text: str) -> CommandResult:
        match = re.search(r"t=\$\(\(n \+ \((-?\d+)\)\)\)", text)
        assert match is not None, text
        self.offset += int(match[1]) / 1e9
        return OK

    def _ntp(self, text: str) -> CommandResult:
        self.ntp_running = text.split()[1] == "start"
        return OK

    def _strobe(self, text: str) -> CommandResult:
        self.strobing = True
        return OK

    def _unstrobe(self, text: str) -> CommandResult:
        self.strobing = False
        return OK


class Hosts(LeadingSshCluster):
    """The SSH cluster, never started, with no HTTP probe (no traffic leaves the test)."""

    def leader(self) -> str | None:
        return None

    def is_healthy(self, node: str) -> bool:
        return True


def cluster(**hosts: ClockHost) -> Hosts:
    specs = [HostSpec(name, "root", 22) for name in hosts]
    ips = {name: f"203.0.113.{i}" for i, name in enumerate(hosts, start=1)}
    return Hosts(
        SERVER, specs, run_id="c1", remote=lambda s: hosts[s.host], resolve=ips.__getitem__
    )


@pytest.fixture
def three() -> dict[str, ClockHost]:
    return {n: ClockHost(n) for n in ("h1", "h2", "h3")}


def changes(h: ClockHost) -> list[str]:
    """Commands that would change the host (clock, services, strobe)."""
    return [t for t in h.commands() if re.search(r"date -s|systemctl (stop|start)|setsid", t)]


# -- which clusters it takes, and refusals --------------------------------------------------


def test_only_whole_hosts_take_host_clock_faults(three: dict[str, ClockHost]) -> None:
    c = cluster(**three)
    assert isinstance(c, HostNodes)
    assert isinstance(clock_nemesis(c, "one", 1), HostClock)

    class Containers:
        name = "docker-etcd"
        faketime = True

        def nodes(self) -> list[str]:
            return ["n1"]

        def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
            return 0, ""

        def ip(self, node: str) -> str:
            return "10.77.0.11"

    assert not isinstance(Containers(), HostNodes)
    assert isinstance(clock_nemesis(Containers()), ClockSkew)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not whole hosts"):
        HostClock(Containers())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("host", "ip", "reason"),
    [
        (ClockHost("h2", boot_id=OURS.boot_id), None, "same boot_id: a container here"),
        (ClockHost("h2", machine_id=OURS.machine_id), None, "this machine's /etc/machine-id"),
        (ClockHost("h2"), "127.0.0.1", "address 127.0.0.1 belongs to this machine"),
    ],
)
def test_a_node_that_is_this_machine_is_refused_before_anything_changes(
    three: dict[str, ClockHost], host: ClockHost, ip: str | None, reason: str
) -> None:
    three["h2"] = host
    c = cluster(**three)
    if ip is not None:
        c._ips["n2"] = ip
    with pytest.raises(RefusedHost) as e:
        HostClock(c, ours=OURS)
    msg = str(e.value)
    assert msg.startswith("Refusing clock faults on n2 (root@h2:22): ")
    assert reason in msg and "\n" not in msg
    assert isinstance(e.value, ClusterError), "a one-line user error, not a crash"
    assert not any(changes(h) for h in three.values())


# -- faults -------------------------------------------------------------------------------


def test_a_bump_holds_ntp_moves_the_clock_and_records_offsets(three: dict[str, ClockHost]) -> None:
    nem = HostClock(cluster(**three), ours=OURS)
    assert set(nem.baseline) == {"n1", "n2", "n3"}
    done = nem.invoke(Invocation("start-clock", {"target": "n2", "delta": -30}))
    assert done.type == "ok", done
    assert abs(done.value["offsets"]["n2"] + 30) < 0.5
    assert abs(three["h2"].offset + 30) < 1e-6
    h2 = changes(three["h2"])
    assert h2[0] == "systemctl stop systemd-timesyncd" and "date -s" in h2[1]
    assert not three["h2"].ntp_running
    assert all(c.sudo for c in three["h2"].calls if c.kind == "run")
    assert not changes(three["h1"]) and not changes(three["h3"])


def test_the_exact_command_that_would_set_the_clock(three: dict[str, ClockHost]) -> None:
    nem = HostClock(cluster(**three), ours=OURS)
    nem.invoke(Invocation("start-clock", {"target": "n1", "delta": 20}))
    shift = next(t for t in three["h1"].commands() if "date -s" in t)
    assert shift == (
        "n=$(date +%s%N) && t=$((n + (20000000000))) && "
        'date -s "@$((t / 1000000000)).$(printf %09d $((t % 1000000000)))" '
        ">/dev/null"
    )


def test_a_random_bump_is_between_5_and_60_seconds(three: dict[str, ClockHost]) -> None:
    nem = HostClock(cluster(**three), "all", seed=7, ours=OURS)
    done = nem.invoke(Invocation("start-clock", {"target": "all"}))
    assert done.type == "ok" and 5 <= abs(done.value["delta"]) <= 60
    assert all(abs(h.offset - done.value["delta"]) < 1e-6 for h in three.values())


def test_reset_returns_each_clock_to_its_baseline_then_teardown_restarts_ntp(
    three: dict[str, ClockHost],
) -> None:
    three["h3"].offset = 0.25  # a host a little off before the run: stays a little off
    nem = HostClock(cluster(**three), ours=OURS)
    nem.invoke(Invocation("start-clock", {"target": "all", "delta": 45}))
    done = nem.invoke(Invocation("stop-clock", None))
    assert done.type == "ok", done
    assert abs(three["h3"].offset - 0.25) < 1e-6 and abs(three["h1"].offset) < 1e-6
    assert abs(done.value["baseline"]["n3"] - 0.25) < 0.2
    assert not any(h.ntp_running for h in three.values()), "held until the end of the run"
    nem.teardown()
    assert all(h.ntp_running for h in three.values())
    assert changes(three["h1"])[-1] == "systemctl start systemd-timesyncd"


def test_a_strobe_runs_in_the_background_and_reset_stops_it(three: dict[str, ClockHost]) -> None:
    nem = HostClock(cluster(**three), ours=OURS)
    done = nem.invoke(
        Invocation(
            "start-clock",
            {"target": "n1", "delta": 5, "mode": "strobe", "period": 0.5, "duration": 10},
        )
    )
    assert done.type == "ok" and done.value == {
        "mode": "strobe",
        "delta": 5,
        "period": 0.5,
        "duration": 10,
        "flips": 10,
        "nodes": ["n1"],
        "proof": {"n1": True},
    }
    assert list(done.value) == ["mode", "delta", "period", "duration", "flips", "nodes", "proof"]
    start = next(t for t in three["h1"].commands() if t.startswith("setsid nohup"))
    assert start.endswith(f" {STROBE_MARK} </dev/null >/dev/null 2>&1 &")
    assert "while [ $i -lt 10 ]" in start
    pgrep = next(t for t in three["h1"].commands() if t.startswith("pgrep"))
    assert STROBE_MARK not in pgrep, "the pattern must not match the shell running pgrep"
    assert re.search(shlex.split(pgrep)[-1], f"sh -c ... {STROBE_MARK}")
    nem.teardown()
    assert not three["h1"].strobing and three["h1"].ntp_running


def test_a_clock_that_did_not_move_fails_the_op(three: dict[str, ClockHost]) -> None:
    three["h1"].on(r"^n=\$\(date", exit=1, stderr="date: cannot set date: Operation not permitted")
    nem = HostClock(cluster(**three), ours=OURS)
    done = nem.invoke(Invocation("start-clock", {"target": "n1", "delta": 10}))
    assert done.type == "fail" and "n1" in str(done.error)


def test_a_time_daemon_outside_systemd_is_not_stopped(three: dict[str, ClockHost]) -> None:
    three["h1"] = ClockHost("h1", services="process ntpd\n")
    nem = HostClock(cluster(**three), ours=OURS)
    done = nem.invoke(Invocation("start-clock", {"target": "n1", "delta": 10}))
    assert done.type == "fail" and "ntpd outside systemd" in str(done.error)
    assert not changes(three["h1"])


def test_nothing_touched_nothing_undone(three: dict[str, ClockHost]) -> None:
    nem = HostClock(cluster(**three), ours=OURS)
    nem.teardown()
    assert not any(changes(h) for h in three.values())
    with pytest.raises(RefusedHost, match="not checked"):
        nem._run("n9", "date -s @0")


def test_the_host_keeps_a_record_of_what_to_undo_until_it_is_undone(
    three: dict[str, ClockHost],
) -> None:
    three["h2"].offset = 0.5
    nem = HostClock(cluster(**three), "all", ours=OURS)
    nem.invoke(Invocation("start-clock", {"target": "all", "delta": 10}))
    h2 = three["h2"].commands()
    record = next(i for i, t in enumerate(h2) if t.endswith(f"> {RECORD}"))
    assert record < h2.index("systemctl stop systemd-timesyncd"), "recorded before stopping"
    data = json.loads(shlex.split(h2[record])[6])
    assert data["stopped"] == ["systemd-timesyncd"] and abs(data["baseline_offset_s"] - 0.5) < 0.2
    three["h3"].on(r"^systemctl start", exit=1)  # h3's service does not come back
    with pytest.raises(RuntimeError, match="could not start systemd-timesyncd again on n3"):
        nem.teardown()
    h2 = three["h2"].commands()
    assert h2[-1] == f"rm -f {RECORD}" and h2[-2] == "systemctl start systemd-timesyncd"
    assert not three["h3"].ran(f"rm -f {RECORD}"), "kept for harness clusters heal --ssh"
