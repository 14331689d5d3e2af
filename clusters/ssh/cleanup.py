"""Cleaning SSH hosts after a run that could not clean up itself (``harness clusters
heal|down --ssh``).

A run undoes on every exit path the harness lives through whatever it did on its hosts
(``SshCluster.stop``, the nemeses' teardown). When the harness itself dies (kill -9, power
loss, a lost control machine), its changes stay there; these functions undo them from what
is on each host alone, knowing nothing of the run:

- ``heal_host``: clear the faults, leave the servers running: delete every iptables rule
  tagged ``harness-*`` (``clusters.ssh.firewall``), SIGCONT every stopped harness server,
  stop a clock strobe, put the clock back to its offset before the fault and start the
  time services the fault stopped (the host's ``clusters.remote.clock_shell.RECORD``);
- ``down_host``: heal, then kill the harness servers, unmount every run's power-loss layer
  and end its process (``clusters.ssh.power.DOWN_ALL``), purge what each run's install record
  says it installed (``clusters.ssh.packages.to_purge``; nothing without a record, e.g.
  with ``--ssh-keep-packages``), remove the run directories under ``/var/lib/harness``, and
  the leftovers of an install cut short: the harness's ``policy-rc.d``, staged .debs and
  uploads.

A harness server is a process whose working directory is a run's data directory (the
launcher ``cd``s there before it ``exec``s the server), or whose pid a run's pidfile holds
while its command line names that run's directory. Nothing else on a host is touched, and
only the hosts named are contacted (``clean_hosts``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from clusters.remote.base import STAGING, Exec, Remote, RemoteError, as_root, must, tail
from clusters.remote.clock_shell import (
    ADOPT_OLD_RECORD,
    OLD_RECORD,
    RECORD,
    STROBE_PATTERN,
    correction,
    measure_offset,
    read_record,
)
from clusters.remote.hosts import HostSpec
from clusters.ssh.firewall import harness_rules, remove_harness_rules
from clusters.ssh.packages import DEB_STAGING, POLICY_MARK, POLICY_RC, purge, to_purge
from clusters.ssh.power import DOWN_ALL
from clusters.ssh.process import ROOT, Layout, ProcessState
from core.cluster import ClusterError

ACTIONS = ("heal", "down")
SERVERS = (
    "show() { s=$(sed 's/^.*) //' /proc/$1/stat 2>/dev/null | cut -d' ' -f1) && "
    'echo "$1 $s $(cat /proc/$1/comm 2>/dev/null)"; }; '
    "for p in /proc/[0-9]*; do "
    f'case "$(readlink $p/cwd 2>/dev/null)" in {ROOT}/*/data|{ROOT}/*/data/*) '
    "show ${p#/proc/};; esac; done; "
    f'for f in {ROOT}/*/server.pid; do [ -f "$f" ] || continue; pid=$(cat "$f"); '
    "case \"$pid\" in ''|*[!0-9]*) continue;; esac; "
    "tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null | grep -qF \"${f%/server.pid}/\" && "
    "show $pid; done; true"
)
"""Prints ``PID STATE COMM`` of every harness server on the host (see the module doc)."""
RUN_DIRS = f"find {ROOT} -mindepth 1 -maxdepth 1 -type d 2>/dev/null; true"
LEFTOVERS = (
    f"rm -rf {DEB_STAGING}-* {STAGING}-*; "
    f"if grep -qxF '{POLICY_MARK}' {POLICY_RC} 2>/dev/null; then rm -f {POLICY_RC}; "
    "echo policy; fi"
)
"""Removes staged .debs and uploads, and a policy-rc.d the harness wrote (says so)."""


@dataclass(frozen=True, slots=True)
class Server:
    """A harness server process on a host."""

    pid: int
    state: str
    comm: str

    def __str__(self) -> str:
        return f"{self.comm} (pid {self.pid})"

    @property
    def paused(self) -> bool:
        return ProcessState(self.pid, self.state).paused


@dataclass
class HostReport:
    """What cleaning one host did, and what it could not do."""

    host: str
    done: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{self.host}: {'; '.join(self.done)}"] if self.done else []
        lines += [f"{self.host}: could not {p}" for p in self.problems]
        if not lines:
            lines.append(f"{self.host}: nothing to undo")
        return "\n".join(lines)

    def step(self, what: str, fn: Callable[[], Any]) -> None:
        """Run one step; a failure is recorded and the next steps still run."""
        try:
            fn()
        except Exception as e:  # one step failing must not stop the rest
            self.problems.append(f"{what}: {e}")


def servers(remote: Remote) -> list[Server]:
    """The harness's server processes on the host (zombies left out)."""
    found: dict[int, Server] = {}
    for line in remote.run(SERVERS, sudo=True, timeout=60).stdout.splitlines():
        words = line.split(maxsplit=2)
        if len(words) == 3 and words[0].isdigit() and words[1] not in ("Z", "X"):
            found.setdefault(int(words[0]), Server(int(words[0]), words[1], words[2]))
    return list(found.values())


def heal_host(remote: Remote) -> HostReport:
    """Clear every fault a run left on the host; its servers keep running."""
    report = HostReport(remote.host)
    if _reachable(remote, report):
        _heal(remote, report)
    return report


def down_host(remote: Remote) -> HostReport:
    """Heal, then remove everything of every run from the host (see the module doc)."""
    report = HostReport(remote.host)
    if not _reachable(remote, report):
        return report
    _heal(remote, report)
    report.step("kill the harness servers", lambda: _kill_servers(remote, report))
    report.step("unmount the power-loss layers", lambda: _unmount(remote, report))
    dirs: list[str] = []
    report.step(
        "list the run directories",
        lambda: dirs.extend(remote.run(RUN_DIRS, sudo=True, timeout=60).stdout.split()),
    )
    before = len(report.problems)
    report.step("purge the packages the runs installed", lambda: _purge(remote, dirs, report))
    if len(report.problems) == before:
        for d in dirs:
            report.step(f"remove {d}", partial(_remove, remote, d, report))
    elif dirs:
        report.problems.append(
            "remove the run directories: kept, as they hold the install "
            "records; run `harness clusters down --ssh` again once the "
            "purge can succeed"
        )
    report.step("remove install leftovers", lambda: _leftovers(remote, report))
    return report


def clean_hosts(
    action: str, hosts: Sequence[HostSpec], remote: Callable[[HostSpec], Remote]
) -> list[HostReport]:
    """``heal`` or ``down`` every host of ``hosts`` (in parallel); a report per host, in
    their order. Connections are closed afterwards."""
    if action not in ACTIONS:
        raise ClusterError(f"Unknown cleanup {action!r}; choose from {', '.join(ACTIONS)}")
    clean = heal_host if action == "heal" else down_host

    def one(spec: HostSpec) -> HostReport:
        try:
            r = remote(spec)
        except Exception as e:  # one host must not cost the others their reports
            report = HostReport(str(spec))
            report.problems.append(f"reach the host: {e}")
            return report
        try:
            return clean(r)
        except Exception as e:
            report = HostReport(r.host)
            report.problems.append(f"{action} it: {e}; run the command again")
            return report
        finally:
            r.close()

    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        return list(pool.map(one, hosts))


# -- steps -------------------------------------------------------------------------------------


def _reachable(remote: Remote, report: HostReport) -> bool:
    """Whether commands run as root on the host; the problem is reported otherwise."""
    try:
        result = remote.run("true", sudo=True, timeout=30)
    except RemoteError as e:
        report.problems.append(f"reach the host: {e}")
        return False
    if not result.ok:
        report.problems.append(
            f"run commands as root ({tail(result.output, 1)}); log in as "
            "root or give the user passwordless sudo"
        )
    return result.ok


def _heal(remote: Remote, report: HostReport) -> None:
    report.step("remove the harness-* firewall rules", lambda: _rules(remote, report))
    report.step("resume stopped servers", lambda: _resume(remote, report))
    report.step("undo the clock fault", lambda: _clock(remote, report))


def _rules(remote: Remote, report: HostReport) -> None:
    removed = remove_harness_rules(remote)
    if removed:
        report.done.append(f"removed {removed} harness-* firewall rule(s)")
    if harness_rules(remote.run(["iptables", "-S"], sudo=True, timeout=30).stdout):
        raise RemoteError("some harness-* rules are still there (see iptables -S)")


def _resume(remote: Remote, report: HostReport) -> None:
    for server in servers(remote):
        if server.paused:
            remote.signal(server.pid, "CONT")
            report.done.append(f"resumed {server}")


def _clock(remote: Remote, report: HostReport) -> None:
    run = as_root(remote)
    if run(["pkill", "-f", STROBE_PATTERN])[0] == 0:
        report.done.append("stopped a clock strobe")
    adopted = must(remote, ["sh", "-c", ADOPT_OLD_RECORD], "moving an old clock record", sudo=True)
    if "moved" in adopted.stdout:
        report.done.append(f"found an older build's clock record at {OLD_RECORD}")
    record = read_record(run)
    if record is None:
        if remote.run(["test", "-e", RECORD], sudo=True, timeout=30).ok:
            raise RemoteError(
                f"{RECORD} is not a clock record (not JSON); look at it, start "
                "the time service by hand and delete it"
            )
        return
    baseline = record.get("baseline_offset_s")
    if baseline is not None:
        shift = correction(baseline, _offset(run))
        if shift is not None:
            must(remote, shift, "putting the clock back", sudo=True)
            if correction(baseline, _offset(run)) is not None:
                raise RemoteError(
                    f"the clock is still not back at {baseline:+.3f} s from this "
                    f"machine's; {RECORD} is kept: run heal again"
                )
            report.done.append(f"put the clock back to {baseline:+.3f} s from this machine's")
    for service in record.get("stopped", []):
        must(remote, ["systemctl", "start", service], f"starting {service}", sudo=True)
        report.done.append(f"started {service}")
    must(remote, ["rm", "-f", RECORD], f"removing {RECORD}", sudo=True)


def _offset(run: Exec) -> float:
    offset = measure_offset(run)
    if offset is None:
        raise RemoteError(
            f"the host's clock could not be read; {RECORD} is kept: run heal "
            "again once the host answers"
        )
    return offset


def _kill_servers(remote: Remote, report: HostReport) -> None:
    found = servers(remote)
    for server in found:
        remote.signal(server.pid, "CONT")  # a stopped process dies of SIGKILL too; be sure
        remote.signal(server.pid, "KILL")
    deadline = time.monotonic() + 10
    while True:
        alive = {s.pid for s in servers(remote)} & {s.pid for s in found}
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    report.done += [f"killed {s}" for s in found if s.pid not in alive]
    if alive:
        raise RemoteError(f"pid(s) {', '.join(map(str, sorted(alive)))} survived kill -9")


def _unmount(remote: Remote, report: HostReport) -> None:
    out = must(remote, DOWN_ALL, "unmounting the power-loss layers", sudo=True, timeout=60)
    report.done += [f"unmounted the power-loss layer at {m}" for m in out.stdout.split()]


def _purge(remote: Remote, dirs: list[str], report: HostReport) -> None:
    names = sorted({p for d in dirs for p in to_purge(remote, Layout(d).install_record)})
    if names:
        purge(remote, names)
        report.done.append(f"purged {' '.join(names)}")


def _remove(remote: Remote, directory: str, report: HostReport) -> None:
    must(remote, ["rm", "-rf", directory], f"removing {directory}", sudo=True)
    report.done.append(f"removed {directory}")


def _leftovers(remote: Remote, report: HostReport) -> None:
    if "policy" in must(remote, LEFTOVERS, "removing install leftovers", sudo=True).stdout:
        report.done.append(f"removed the harness's {POLICY_RC}")
