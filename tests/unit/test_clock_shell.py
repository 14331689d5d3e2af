"""Host clock helpers: offsets, the shift and strobe scripts, time services.

The shift script is executed here for real, but with ``date`` replaced on PATH by a shim
that prints what it would set (and refuses to exist if the real one were called with -s),
so the arithmetic is checked without ever touching this machine's clock.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from clusters.remote.base import Command
from clusters.remote.clock_shell import (
    FIND_SERVICES,
    TimeService,
    measure_offset,
    running_time_services,
    shift_script,
    strobe_script,
)

SHIM = """#!/bin/sh
# Test stand-in for date(1): prints the time it would set, sets nothing.
case "$1" in
  +%s%N) echo 1700000000123456789 ;;
  -s) echo "SET $2" ;;
  *) echo "unexpected date $*" >&2; exit 2 ;;
esac
"""


def run_with_shim(script: str, tmp_path: Path) -> str:
    shim = tmp_path / "date"
    shim.write_text(SHIM)
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}
    # The shim must be the date the script finds, or the test must not run at all.
    found = subprocess.run(
        ["sh", "-c", "command -v date"], env=env, capture_output=True, text=True
    ).stdout.strip()
    assert found == str(shim)
    proc = subprocess.run(
        ["sh", "-c", script.replace(">/dev/null", "")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (20, "SET @1700000020.123456789"),
        (-30.5, "SET @1699999969.623456789"),
        (0.000000001, "SET @1700000000.123456790"),
        (-0.2, "SET @1699999999.923456789"),
    ],
)
def test_shift_adds_delta_in_nanoseconds(delta: float, expected: str, tmp_path: Path) -> None:
    assert run_with_shim(shift_script(delta), tmp_path) == expected


def test_strobe_jumps_forward_and_back_n_times() -> None:
    script = strobe_script(5, 0.5, 3)
    assert "while [ $i -lt 3 ]" in script
    assert script.count("date -s") == 2
    assert "(5000000000)" in script and "(-5000000000)" in script
    assert script.count("sleep 0.5") == 2


def test_offset_is_taken_to_the_round_trip_s_midpoint() -> None:
    def run(cmd: Command) -> tuple[int, str]:
        assert list(cmd) == ["date", "+%s.%N"]
        return 0, f"{time.time() + 12.5:.9f}\n"

    offset = measure_offset(run)
    assert offset is not None and abs(offset - 12.5) < 0.05
    assert measure_offset(lambda c: (0, "garbage")) is None
    assert measure_offset(lambda c: (255, "")) is None


def test_time_services_found_by_systemd_or_process() -> None:
    found = running_time_services(lambda c: (0, "systemd chrony\nprocess ntpd\nnoise\n"))
    assert found == [TimeService("chrony", True), TimeService("ntpd", False)]
    assert found[0].stop() == ["systemctl", "stop", "chrony"]
    assert found[0].start() == ["systemctl", "start", "chrony"]
    assert found[1].start() is None
    assert "systemd-timesyncd" in FIND_SERVICES and "/run/systemd/system" in FIND_SERVICES


def test_the_service_finder_runs_in_sh_and_lists_nothing_here_without_them() -> None:
    # Read-only: systemctl is-active / pgrep. On a machine without them it prints nothing.
    proc = subprocess.run(["sh", "-c", FIND_SERVICES], capture_output=True, text=True)
    assert proc.returncode == 0
    assert all(line.split()[0] in ("systemd", "process") for line in proc.stdout.splitlines())
