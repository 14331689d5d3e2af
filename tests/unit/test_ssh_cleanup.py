"""``harness clusters heal|down --ssh`` on simulated hosts that a killed harness left dirty.

``DirtyHost`` is a ``FakeRemote`` holding what a run leaves on a host when the harness
dies mid-fault (harness-* and other iptables rules, a paused server, a stopped time
service with a shifted clock, run directories with their install records, a policy-rc.d)
and answers the cleanup's commands from that state, so the tests see what heal and down
undo, what they leave alone, and how they report. The same commands run against real
sshd hosts in tests/integration/test_ssh_consul_lock.py.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from clusters.remote.base import CommandResult, RemoteError
from clusters.remote.clock_shell import RECORD
from clusters.remote.hosts import HostSpec
from clusters.ssh import cleanup
from clusters.ssh.cleanup import SERVERS, clean_hosts, down_host, heal_host, servers
from clusters.ssh.packages import POLICY_RC
from harness.cli import EXIT_BAD_ARGS, main
from tests.support.fake import FakeRemote

OK = CommandResult(0, "", "")
NO = CommandResult(1, "", "")
OURS = ["INPUT", "-s", "10.9.0.12", "-m", "comment", "--comment", "harness-ab12", "-j", "DROP"]
THEIRS = ["INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"]


class DirtyHost(FakeRemote):
    """A host as a harness killed mid-fault leaves it; see the module docstring."""

    def __init__(self, name: str = "h1") -> None:
        super().__init__(f"root@{name}:22")
        self.rules = [OURS, THEIRS]
        self.procs = {4242: ["S", "etcd"], 777: ["T", "consul"]}
        self.offset = 40.0
        self.clock_record: dict[str, object] | None = {
            "stopped": ["systemd-timesyncd"],
            "baseline_offset_s": 0.0,
        }
        self.ntp = False
        self.dirs = {
            "/var/lib/harness/etcd-1a2b3c": {
                "installed": ["etcd-server", "etcd-client", "adduser"],
                "how": "upload",
            },
            "/var/lib/harness/consul-4d5e6f": {"installing": ["consul"], "before": ["base-files"]},
            "/var/lib/harness/kept-7a8b9c": None,
        }
        self.packages = {"base-files", "etcd-server", "etcd-client", "adduser", "consul", "pipexec"}
        self.policy = True
        self.on(r"^iptables ", respond=self._iptables)
        self.on(
            r"^show\(\)",
            respond=lambda _: CommandResult(
                0, "".join(f"{pid} {st} {comm}\n" for pid, (st, comm) in self.procs.items()), ""
            ),
        )
        self.on(r"^kill -(\w+) (\d+)$", respond=self._kill)
        self.on(r"^pkill -f ", exit=1)
        self.on(
            rf"^cat {RECORD}$",
            respond=lambda _: (
                CommandResult(0, json.dumps(self.clock_record), "")
                if self.clock_record is not None
                else NO
            ),
        )
        self.on(rf"^test -e {RECORD}$", respond=lambda _: OK if self.clock_record else NO)
        self.on(rf"^rm -f {RECORD}$", respond=self._forget_clock)
        self.on(
            r"^date \+%s\.%N$",
            respond=lambda _: CommandResult(0, f"{time.time() + self.offset:.9f}\n", ""),
        )
        self.on(r"^n=\$\(date \+%s%N\)", respond=self._shift)
        self.on(r"^systemctl start ", respond=self._ntp)
        self.on(
            r"^find /var/lib/harness ",
            respond=lambda _: CommandResult(0, "".join(f"{d}\n" for d in self.dirs), ""),
        )
        self.on(r"^cat /var/lib/harness/[^/]+/packages\.json$", respond=self._install_record)
        self.on(
            r"dpkg-query",
            respond=lambda _: CommandResult(
                0, "".join(f"ii  {p}\n" for p in sorted(self.packages)), ""
            ),
        )
        self.on(r"purge -y", respond=self._purge)
        self.on(r"^rm -rf /var/lib/harness/", respond=self._rmdir)
        self.on(r"^rm -rf /var/cache/harness-debs-\*", respond=self._leftovers)

    def _iptables(self, text: str) -> CommandResult:
        op, *spec = shlex.split(text)[1:]
        if op == "-D":
            self.rules.remove(spec)
        return CommandResult(
            0, "-P INPUT ACCEPT\n" + "".join("-A " + shlex.join(r) + "\n" for r in self.rules), ""
        )

    def _kill(self, text: str) -> CommandResult:
        sig, pid = text.split()[1][1:], int(text.split()[2])
        if pid not in self.procs:
            return NO
        if sig == "KILL":
            del self.procs[pid]
        else:
            self.procs[pid][0] = "S" if sig == "CONT" else self.procs[pid][0]
        return OK

    def _forget_clock(self, _: str) -> CommandResult:
        self.clock_record = None
        return OK

    def _shift(self, text: str) -> CommandResult:
        match = re.search(r"t=\$\(\(n \+ \((-?\d+)\)\)\)", text)
        assert match is not None
        self.offset += int(match[1]) / 1e9
        return OK

    def _ntp(self, _: str) -> CommandResult:
        self.ntp = True
        return OK

    def _install_record(self, text: str) -> CommandResult:
        record = self.dirs.get(text.split()[1].rsplit("/", 1)[0])
        return CommandResult(0, json.dumps(record), "") if record else NO

    def _purge(self, text: str) -> CommandResult:
        self.packages -= set(text.split("purge -y ")[1].split(" ||")[0].split())
        return OK

    def _rmdir(self, text: str) -> CommandResult:
        self.dirs.pop(text.split()[-1], None)
        return OK

    def _leftovers(self, _: str) -> CommandResult:
        policy, self.policy = self.policy, False
        return CommandResult(0, "policy\n" if policy else "", "")


def test_heal_clears_the_faults_and_leaves_the_servers_and_the_runs() -> None:
    host = DirtyHost()
    report = heal_host(host)
    assert report.problems == []
    assert host.rules == [THEIRS], "only the harness's rules are deleted"
    assert host.procs == {4242: ["S", "etcd"], 777: ["S", "consul"]}, "resumed, not killed"
    assert abs(host.offset) < 0.2 and host.ntp and host.clock_record is None
    assert len(host.dirs) == 3 and "consul" in host.packages and host.policy
    assert str(report) == (
        "root@h1:22: removed 1 harness-* firewall rule(s); resumed consul (pid 777); put the "
        "clock back to +0.000 s from this machine's; started systemd-timesyncd"
    )
    assert host.ran(r"^kill -CONT 777$") and not host.ran(r"^kill -CONT 4242$")


def test_down_removes_every_run_and_purges_what_the_records_name() -> None:
    host = DirtyHost()
    report = down_host(host)
    assert report.problems == []
    assert host.procs == {} and host.dirs == {} and not host.policy
    assert host.rules == [THEIRS] and host.ntp
    # complete record: its list; install cut short: what is there now but was not before
    assert host.packages == {"base-files"}
    assert "killed etcd (pid 4242); killed consul (pid 777)" in str(report)
    assert "purged adduser consul etcd-client etcd-server pipexec" in str(report)
    assert "removed /var/lib/harness/kept-7a8b9c" in str(report)
    assert str(report).endswith(f"removed the harness's {POLICY_RC}")
    order = host.commands()
    assert next(i for i, t in enumerate(order) if "purge" in t) < next(
        i for i, t in enumerate(order) if t.startswith("rm -rf /var/lib/harness/")
    ), "the records are read before their directories go"


def test_a_clean_host_has_nothing_to_undo() -> None:
    host = DirtyHost()
    host.rules, host.procs, host.dirs, host.policy = [THEIRS], {}, {}, False
    host.clock_record = None
    host.offset = 3.0  # no record of a fault: a clock that is off is none of our business
    assert str(down_host(host)) == "root@h1:22: nothing to undo"
    assert not host.ran(r"date -s|systemctl|purge|^kill ")


def test_each_step_is_tried_and_what_failed_is_one_line_each() -> None:
    host = DirtyHost()
    host.on(r"purge -y", exit=100, stderr="E: dpkg was interrupted")
    host.on(r"^systemctl start ", exit=1, stderr="Unit not found")
    dirs = set(host.dirs)
    report = down_host(host)
    assert host.procs == {}, "later steps still ran"
    assert set(host.dirs) == dirs, "the install records a retry needs were removed"
    assert len(report.problems) == 3 and all("\n" not in p for p in report.problems)
    assert "could not undo the clock fault: root@h1:22: starting systemd-timesyncd failed" in str(
        report
    )
    assert "could not purge the packages the runs installed" in str(report)
    assert "run `harness clusters down --ssh` again once the purge can succeed" in str(report)


def test_a_server_that_survives_kill_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    host = DirtyHost()
    host.on(r"^kill -KILL ", exit=0)  # "delivered", but it lives on
    monkeypatch.setattr(cleanup.time, "monotonic", iter(range(0, 1000, 20)).__next__)
    report = down_host(host)
    assert "could not kill the harness servers: pid(s) 777, 4242 survived kill -9" in str(report)


def test_unreachable_hosts_and_refused_sudo_are_reported_and_others_cleaned() -> None:
    good, gone, nosudo = DirtyHost("h1"), DirtyHost("h2"), DirtyHost("h3")

    def lost(_: str) -> CommandResult:
        raise RemoteError("root@h2:22: cannot connect: Connection refused; check the host")

    gone.on(r".", respond=lost)
    nosudo.on(r"^true$", exit=1, stderr="sudo: a password is required")
    fakes = {"h1": good, "h2": gone, "h3": nosudo}
    reports = clean_hosts("heal", [HostSpec(h) for h in fakes], lambda s: fakes[s.host])
    assert [r.host for r in reports] == ["root@h1:22", "root@h2:22", "root@h3:22"]
    assert good.rules == [THEIRS] and reports[0].problems == []
    assert str(reports[1]) == (
        "root@h2:22: could not reach the host: root@h2:22: cannot "
        "connect: Connection refused; check the host"
    )
    assert "run commands as root (sudo: a password is required)" in reports[2].problems[0]
    assert nosudo.rules == [OURS, THEIRS], "nothing tried without root"
    assert all(h.closed == 1 for h in fakes.values())


def test_servers_are_listed_once_without_zombies() -> None:
    host = FakeRemote().on(
        r"^show\(\)", stdout="12 S etcd\n12 S etcd\n13 Z consul\n14 T java\ngarbage\n"
    )
    assert [(s.pid, s.paused) for s in servers(host)] == [(12, False), (14, True)]
    assert subprocess.run(["sh", "-n", "-c", SERVERS]).returncode == 0, "valid shell"


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["heal", "--nodes", "a,b"], "--nodes and --nodes-file name SSH hosts: add --ssh"),
        (["down", "--ssh"], "No hosts given"),
        (["heal", "--ssh", "--nodes", "a,b:x"], "Bad host 'b:x'"),
        (["heal", "--ssh", "--nodes", "a,a"], "named twice"),
        (
            ["down", "--ssh", "--nodes", "a", "--ssh-key", "/nonexistent/k"],
            "--ssh-key /nonexistent/k is not a file",
        ),
        (["down", "--ssh", "--nodes", "a", "--ssh-port", "0"], "--ssh-port: must be at least 1"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["clusters", *argv])
    except SystemExit as e:  # argparse's own checks (the option table's ranges)
        code = e.code  # type: ignore[assignment]
    assert code == EXIT_BAD_ARGS
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_command_cleans_only_the_hosts_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clusters.ssh import factory

    fakes = {"h1": DirtyHost("h1"), "h2": DirtyHost("h2"), "h3": DirtyHost("h3")}
    made: list[HostSpec] = []

    def remotes(options: factory.SshClusterOptions) -> object:
        assert options.user == "ops" and options.port == 2222 and not options.strict
        return lambda spec: made.append(spec) or fakes[spec.host]

    monkeypatch.setattr(factory, "ssh_remotes", remotes)
    nodes = tmp_path / "nodes"
    nodes.write_text("# lab\nh2\n")
    code = main(
        [
            "clusters",
            "down",
            "--ssh",
            "--nodes",
            "h1",
            "--nodes-file",
            str(nodes),
            "--ssh-user",
            "ops",
            "--ssh-port",
            "2222",
            "--ssh-no-strict",
        ]
    )
    assert code == 0
    assert made == [HostSpec("h1"), HostSpec("h2")]
    assert fakes["h3"].calls == [], "a host not named is never contacted"
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["root@h1", "root@h2"]
    fakes["h1"].on(r"^rm -rf /var/lib/harness/", exit=1, stderr="busy")
    fakes["h1"].dirs = {"/var/lib/harness/x": None}
    assert (
        main(
            [
                "clusters",
                "down",
                "--ssh",
                "--nodes",
                "h1",
                "--ssh-user",
                "ops",
                "--ssh-port",
                "2222",
                "--ssh-no-strict",
            ]
        )
        == 1
    )


def test_a_clock_that_cannot_be_read_keeps_its_record_and_says_to_heal_again() -> None:
    host = DirtyHost()
    host.on(r"^date \+%s\.%N$", exit=1, stderr="date: cannot read the clock")
    report = heal_host(host)
    assert host.clock_record is not None and host.offset == 40.0 and not host.ntp
    assert "the host's clock could not be read" in str(report)
    assert "run heal again once the host answers" in str(report)


def test_a_record_an_older_build_left_at_its_old_place_is_healed() -> None:
    """Builds from the ground floor's move into ``core/`` wrote the clock record to
    /var/lib/core/clock.json; heal finds it there, moves it, and undoes what it says."""
    host = DirtyHost()
    old, host.clock_record = host.clock_record, None

    def adopt(_: str) -> CommandResult:
        host.clock_record = old
        return CommandResult(0, "moved\n", "")

    host.on(r"^sh -c 'if \[ -e /var/lib/core/clock\.json \]", respond=adopt)
    report = heal_host(host)
    assert report.problems == []
    assert abs(host.offset) < 0.2 and host.ntp and host.clock_record is None
    assert "found an older build's clock record at /var/lib/core/clock.json" in str(report)
    assert host.ran(r"mv /var/lib/core/clock\.json /var/lib/harness/clock\.json")


def test_a_host_lost_midway_or_never_reached_costs_no_other_host_its_report() -> None:
    midway = DirtyHost("h1")

    def lost(_: str) -> CommandResult:
        raise RemoteError("root@h1:22: connection lost; check the host")

    midway.on(r"^find /var/lib/harness", respond=lost)
    good = DirtyHost("h2")

    def connect(spec: HostSpec) -> DirtyHost:
        if spec.host == "h3":
            raise RemoteError("root@h3:22: cannot connect: no route to host")
        return {"h1": midway, "h2": good}[spec.host]

    reports = clean_hosts("down", [HostSpec(h) for h in ("h1", "h2", "h3")], connect)
    assert "could not list the run directories: root@h1:22: connection lost" in str(reports[0])
    assert midway.procs == {} and midway.dirs, "what could be done was done, and no more"
    assert not reports[1].problems and good.dirs == {}
    assert "could not reach the host: root@h3:22: cannot connect" in str(reports[2])
