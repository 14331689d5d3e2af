"""Settings that cannot produce the overlap a holding workload looks for are said at the
start and in test.json, with the settings that would (issue 30, item 5): a kill of the
whole service at least as long as the lease TTL, a client pause shorter than the lease."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run

from checkers.windows import CRASHES, FREEZES_CLIENT
from core.options import RunOptions
from workloads.overlap import FaultLength, cannot_overlap

LEASE = RunOptions.of(lease_ttl=10, keepalive=3, work_time=0.3)


def kill(seconds: float, whole: bool = True) -> FaultLength:
    return FaultLength("kill", frozenset({CRASHES}), seconds, whole)


def pause(seconds: float) -> FaultLength:
    return FaultLength("client-pause", frozenset({FREEZES_CLIENT}), seconds, False)


def test_a_kill_of_the_whole_service_as_long_as_the_ttl_cannot_overlap() -> None:
    (said,) = cannot_overlap(LEASE, [kill(10)])
    assert said.startswith("the kill lasts 10 s, not shorter than the lease TTL 10 s")
    assert "--nemesis-interval below 10, or --lease-ttl above 10" in said
    assert cannot_overlap(LEASE, [kill(5)]) == []
    assert cannot_overlap(LEASE, [kill(10, whole=False)]) == []  # the others grant


def test_a_naive_holder_working_past_the_kill_can_still_write_late() -> None:
    naive = LEASE.with_(holder_check=False, work_time=12)
    assert cannot_overlap(naive, [kill(10)]) == []
    assert cannot_overlap(naive.with_(work_time=5), [kill(10)]) != []


def test_a_pause_shorter_than_the_lease_cannot_overlap() -> None:
    (said,) = cannot_overlap(LEASE.with_(pause_at=5.0), [pause(5)])
    assert "shorter than the lease TTL 10 s less a keepalive (3 s)" in said
    assert "--pause-for above 10" in said
    assert cannot_overlap(LEASE, [pause(14)]) == []


SHORT = ("--lease-ttl", "2", "--keepalive", "0.5", "--time-limit", "6", "--recovery-time", "1")


@pytest.mark.slow
@pytest.mark.parametrize(("interval", "warned"), [("2", True), ("1.5", False)])
def test_the_start_line_and_test_json_say_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, interval: str, warned: bool
) -> None:
    code, out, err = run(
        capsys,
        *("run", "--nemesis", "kill", "--nemesis-interval", interval, *SHORT),
        *("-o", str(tmp_path)),
    )
    assert code == 0, out + err
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    lines = [line for line in err.splitlines() if line.startswith("warning: the kill lasts")]
    assert len(lines) == int(warned) and len(test.get("warnings", [])) == int(warned), err
    if warned:
        assert test["warnings"][0] == lines[0].removeprefix("warning: ")
        assert "--nemesis-interval below 2" in lines[0]
