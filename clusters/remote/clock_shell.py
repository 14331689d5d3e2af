"""A host's real clock: read its offset, shift it, and hold its time service still.

Shifting is a small shell helper run on the host as root: it reads the time in
nanoseconds, adds the shift and sets it back with ``date -s @SECONDS.NANOS`` (which calls
``clock_settime(CLOCK_REALTIME)``), in one command so the read-to-set gap is microseconds.
Only the system clock moves; the hardware clock is never written, so a reboot also
restores the time. Shell and coreutils suffice: no Python is needed on the host.

An NTP daemon would undo a fault within seconds (or fight a strobe), so the ones running
(``TIME_SERVICES``) are stopped for the run and started again afterwards. Until then a
record on the host (``RECORD``) names them, with the host's clock offset before the fault,
so that ``harness clusters heal --ssh`` can undo a fault the harness itself could not
(killed, say): stop the strobe (``STROBE_PATTERN``), put the clock back, start them.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from typing import Any

from clusters.remote.base import Exec

READ_CLOCK = ["date", "+%s.%N"]

TIME_SERVICES = ("systemd-timesyncd", "chrony", "chronyd", "ntpsec", "ntp", "ntpd", "openntpd")
"""systemd units (Debian's names first) of the time services that would correct a fault."""
TIME_DAEMONS = ("systemd-timesyn", "chronyd", "ntpd")
"""Their process names (as /proc/PID/comm truncates them), for hosts without systemd."""
RECORD = "/var/lib/harness/clock.json"
"""On a host whose clock a run changed: what to undo (``record_command``), until undone;
beside the runs' directories (``clusters.ssh.process.ROOT``), which cleaning removes
without it."""
OLD_RECORD = "/var/lib/core/clock.json"
"""Where builds from the move of the ground floor into ``core/`` until December 2026 wrote
``RECORD`` (a package move's rewrite, undone): healing moves one found there first."""
ADOPT_OLD_RECORD = (
    f"if [ -e {OLD_RECORD} ] && [ ! -e {RECORD} ]; then mkdir -p {RECORD.rsplit('/', 1)[0]} "
    f"&& mv {OLD_RECORD} {RECORD} && echo moved; fi"
)
"""Shell that moves a record at ``OLD_RECORD`` to ``RECORD`` (printing ``moved``)."""
STROBE_MARK = "harness-host-clock-strobe"
"""The strobe loop's ``$0`` on a host, so it can be found and stopped."""
STROBE_PATTERN = STROBE_MARK[:-1] + f"[{STROBE_MARK[-1]}]"
"""``pgrep -f`` pattern for the strobe that does not match the shell running pgrep."""
RESET_SLACK_S = 0.05
"""A clock this close to its baseline offset is left alone."""


def measure_offset(run: Exec) -> float | None:
    """The host's clock minus this machine's, in seconds (to the midpoint of the round
    trip, so the error is at most half of it); None when the host does not answer."""
    before = time.time()
    rc, out = run(READ_CLOCK)
    after = time.time()
    try:
        remote = float(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return round(remote - (before + after) / 2, 3) if rc == 0 else None


def shift_script(delta: float) -> str:
    """Shell that moves the clock by ``delta`` seconds (nanosecond resolution), as root."""
    ns = round(delta * 1e9)
    return (
        "n=$(date +%s%N) && t=$((n + " + f"({ns})" + ")) && "
        'date -s "@$((t / 1000000000)).$(printf %09d $((t % 1000000000)))" >/dev/null'
    )


def correction(baseline: float | None, now: float | None) -> str | None:
    """The shell that puts a clock now ``now`` s off back to ``baseline`` s off (offsets to
    the control machine); None when it is there already or either is unknown."""
    if baseline is None or now is None or abs(now - baseline) <= RESET_SLACK_S:
        return None
    return shift_script(baseline - now)


def strobe_script(delta: float, period: float, flips: int) -> str:
    """Shell that jumps the clock ``+delta`` then back, ``flips`` times, ``period`` s apart.

    Each jump forward is undone by a jump back, so a strobe that runs to its end leaves the
    clock where it found it (give or take the jumps' own microseconds).
    """
    return (
        f"i=0; while [ $i -lt {int(flips)} ]; do {shift_script(delta)}; sleep {period:g}; "
        f"{shift_script(-delta)}; sleep {period:g}; i=$((i + 1)); done"
    )


@dataclass(frozen=True, slots=True)
class TimeService:
    """A time service running on a host, and how it is stopped and started there."""

    name: str
    systemd: bool

    def stop(self) -> list[str]:
        if self.systemd:
            return ["systemctl", "stop", self.name]
        return ["pkill", "-x", self.name]

    def start(self) -> list[str] | None:
        """The command that starts it again (None: started by hand, cannot restart)."""
        return ["systemctl", "start", self.name] if self.systemd else None


FIND_SERVICES = (
    "if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then "
    f"for s in {' '.join(TIME_SERVICES)}; do "
    'systemctl is-active --quiet "$s" 2>/dev/null && echo "systemd $s"; done; '
    f"else for p in {' '.join(TIME_DAEMONS)}; do "
    'pgrep -x "$p" >/dev/null 2>&1 && echo "process $p"; done; fi; true'
)
"""Lists the running time services, one ``systemd UNIT`` or ``process NAME`` per line."""


def running_time_services(run: Exec) -> list[TimeService]:
    """The time services running on a host now."""
    _, out = run(FIND_SERVICES)
    found = []
    for line in out.splitlines():
        kind, _, name = line.strip().partition(" ")
        if kind in ("systemd", "process") and name:
            found.append(TimeService(name, kind == "systemd"))
    return found


def record_command(services: list[TimeService], baseline: float | None) -> str:
    """Shell that writes ``RECORD``: the time services about to be stopped (those that can
    be started again) and the host's clock offset before the fault."""
    data = {"stopped": [s.name for s in services if s.systemd], "baseline_offset_s": baseline}
    folder = RECORD.rsplit("/", 1)[0]
    return f"mkdir -p {folder} && printf '%s\\n' {shlex.quote(json.dumps(data))} > {RECORD}"


def read_record(run: Exec) -> dict[str, Any] | None:
    """The host's ``RECORD`` (None when it has none or it is not readable JSON)."""
    rc, out = run(["cat", RECORD])
    try:
        data = json.loads(out) if rc == 0 else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
