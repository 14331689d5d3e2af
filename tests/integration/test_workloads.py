"""Every workload on every Docker target, through the real ``harness run`` command.

Each run starts its own cluster (2-5 s), runs a few seconds, checks and tears down. Every
run must leave a well-formed history (every invocation paired) and a verdict from every
checker in ``results.json``. The lock runs then show the domain's point on each
implementation: a client paused longer than its lease wakes up believing it still holds
the lock and writes; without fencing the resource accepts that stale write (the run is
invalid, exit 1); with fencing, the implementations that hand out tokens have it
rejected (valid, exit 0), those without tokens (Redis, Redlock) cannot.

Short timings keep the module at a few minutes: lease TTL 2 s, keepalive 0.5 s, a pause
of 5 s (6 s on Consul, which invalidates a session up to two TTLs after its last
renewal) 3 s into the workload.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clusters._docker import LABEL, connect
from core.store import read_history_jsonl

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LEASE = ["--lease-ttl", "2", "--keepalive", "0.5", "--work-time", "0.5", "--acquire-wait", "1"]
QUICK = ["--time-limit", "3", "--recovery-time", "1", "--nemesis", "none"]
PAUSE_FOR = {"consul": 6}
"""Pause lengths (s) other than the default 5."""

LOCKS = [  # (target, --lock, hands out fencing tokens)
    ("etcd", "lease-lock", True),
    ("etcd", "recipe", True),
    ("zookeeper", "recipe", True),
    ("consul", "session", True),
    ("redis", "set-nx", False),
    ("redlock", "redlock", False),
]
REGISTERS = ["etcd", "zookeeper", "consul", "redis"]
ELECTIONS = ["etcd", "zookeeper", "consul"]


def pause_args(target: str) -> list[str]:
    pause = PAUSE_FOR.get(target, 5)
    return [
        "--nemesis",
        "client-pause",
        "--pause-at",
        "3",
        "--pause-for",
        str(pause),
        "--time-limit",
        str(pause + 5),
        "--recovery-time",
        "1",
    ]


def harness_containers() -> set[str]:
    client = connect()
    return {c.name for c in client.containers.list(all=True, filters={"label": f"{LABEL}=1"})}


@pytest.fixture(autouse=True)
def no_leftovers() -> Any:
    """Each run removes its cluster: no harness container may outlive a test."""
    before = harness_containers()
    yield
    left = harness_containers() - before
    assert not left, f"containers left behind: {sorted(left)}"


def run(out: Path, *args: str) -> tuple[int, dict[str, Any], Path]:
    """``harness run ARGS -o OUT``: exit code, results.json, run directory."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    run_dir = out / "latest"
    assert (run_dir / "results.json").exists(), proc.stdout + proc.stderr
    results = json.loads((run_dir / "results.json").read_text())
    read_history_jsonl(run_dir / "history.jsonl").pairs()  # raises on a malformed history
    assert results["valid"] in (True, False, "unknown"), results["valid"]
    for name, checker in results["checkers"].items():
        assert checker["valid"] in (True, False, "unknown"), (name, checker)
    return proc.returncode, results, run_dir.resolve()


def client_ops(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "history.jsonl").read_text().splitlines()
    return [op for op in map(json.loads, lines) if op["process"] != "nemesis"]


def paused_a_holder(run_dir: Path) -> bool:
    """Whether the client pause froze a process that held the lock by its own account (the
    nemesis falls back to any client when, for a few ms between holders, nobody does)."""
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    start = next(op for op in ops if op["f"] == "start-client-pause" and op["type"] == "ok")
    victim = start["value"]["processes"][0]
    holding = False
    for op in ops:
        if op["time"] > start["time"]:
            break
        if op["process"] == victim and op["f"] in ("acquire", "campaign") and op["type"] == "ok":
            holding = True
        if op["process"] == victim and op["f"] in ("release", "resign") and op["type"] == "invoke":
            holding = False
    return holding


def paused_run(out: Path, checker: str, *args: str) -> tuple[int, dict[str, Any], Path]:
    """A client-pause run, run again (up to twice) if the scenario did not happen: the
    pause missed the holder, or the holder noticed its loss before writing (its keeper
    won the race at the wake-up: right, but not what the test is about). At load 8 the
    Consul holder's keeper won twice in a row once (its renewal answered 12 ms after the
    wake-up, before the holder's write)."""
    for attempt in ("first", "again"):
        code, results, run_dir = run(out / attempt, *args)
        found = results["checkers"][checker]
        if paused_a_holder(run_dir) and (found["stale_accepted"] or found["stale_rejected"]):
            return code, results, run_dir
    return run(out / "last", *args)


# --- lock: the stale write, without and with fencing ------------------------------------


@pytest.mark.parametrize(("target", "lock", "tokens"), LOCKS)
def test_lock_without_fault(tmp_path: Path, target: str, lock: str, tokens: bool) -> None:
    code, results, run_dir = run(
        tmp_path, "--target", target, "--workload", "lock", "--lock", lock, *LEASE, *QUICK
    )
    assert results["checkers"]["mutex"]["valid"] is True, results["checkers"]["mutex"]
    # a lock without tokens cannot be fenced: fencing does not apply, mutual exclusion judges
    assert code == 0, {k: c["summary"] for k, c in results["checkers"].items()}
    assert results["checkers"]["fencing"].get("applicable", True) is tokens
    grants = [op for op in client_ops(run_dir) if op["f"] == "acquire" and op["type"] == "ok"]
    assert len(grants) >= 3
    assert all((op["value"]["token"] is not None) == tokens for op in grants)
    # issue 30: a setting the harness changes from the service's default is said (Consul's
    # lock-delay 0 s against its 15 s), in test.json and in harness.log, not in a docstring
    rules = json.loads((run_dir / "test.json").read_text())["service_rules"]
    assert ("session lock-delay" in [r["setting"] for r in rules]) is (target == "consul")
    if target == "consul":
        assert (
            "consul: session lock-delay 0 s (consul's default: 15 s)"
            in (run_dir / "harness.log").read_text()
        )


@pytest.mark.parametrize(("target", "lock", "tokens"), LOCKS)
def test_paused_holder_writes_stale_without_fencing(
    tmp_path: Path, target: str, lock: str, tokens: bool
) -> None:
    code, results, _ = paused_run(
        tmp_path,
        "mutex",
        "--target",
        target,
        "--workload",
        "lock",
        "--lock",
        lock,
        *LEASE,
        *pause_args(target),
        "--fencing",
        "off",
    )
    mutex = results["checkers"]["mutex"]
    assert mutex["stale_accepted"], mutex["summary"]
    assert code == 1, mutex["summary"]


@pytest.mark.parametrize(("target", "lock"), [(t, lk) for t, lk, tokens in LOCKS if tokens])
def test_fencing_rejects_the_stale_write(tmp_path: Path, target: str, lock: str) -> None:
    code, results, _ = paused_run(
        tmp_path,
        "mutex",
        "--target",
        target,
        "--workload",
        "lock",
        "--lock",
        lock,
        *LEASE,
        *pause_args(target),
        "--fencing",
        "on",
    )
    mutex = results["checkers"]["mutex"]
    assert mutex["stale_rejected"] and not mutex["stale_accepted"], mutex["summary"]
    assert code == 0, {k: c["summary"] for k, c in results["checkers"].items()}


def test_a_consul_handover_is_measured_by_its_documented_expiry_rule(tmp_path: Path) -> None:
    """Issue 30: Consul invalidates a session up to 2 x TTL after its last renewal (its
    documented lazy invalidation); the lock passed on about a TTL after last renewal + TTL
    read as a handover delay of a whole TTL. Measured by the rule the run recorded, the
    delay is the part past the rule's latest end, and the sentence cites the rule."""
    code, results, _ = paused_run(
        tmp_path,
        "mutex",
        *("--target", "consul", "--workload", "lock", "--lock", "session"),
        *LEASE,
        *pause_args("consul"),
        *("--fencing", "on"),
    )
    mutex = results["checkers"]["mutex"]
    lost = [h for h in mutex["handovers"] if h["lease_expiry_source"] == "client"]
    assert lost and code == 0, mutex["summary"]
    for h in lost:
        assert h["expiry_rule"]["ttls"] == 2.0 and h["expiry_rule"]["target"] == "consul"
        assert h["lease_expiry_latest"] - h["lease_expiry"] == 2 * 10**9  # one TTL more
        assert h["after_expiry_s"] > 1.0, h  # the client-side estimate: a TTL "late"
        assert abs(h["handover_delay_s"]) < 1.0, h  # by Consul's rule: on time
    assert "Handover delay" in mutex["summary"]
    assert "by consul's documented rule (session TTL a lower bound)" in mutex["summary"]


# --- election -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ELECTIONS)
def test_election_without_fault(tmp_path: Path, target: str) -> None:
    code, results, run_dir = run(
        tmp_path, "--target", target, "--workload", "election", *LEASE, *QUICK
    )
    assert code == 0, results
    epochs = [
        op["value"]["epoch"]
        for op in client_ops(run_dir)
        if op["f"] == "campaign" and op["type"] == "ok"
    ]
    assert len(epochs) >= 3 and epochs == sorted(epochs)


@pytest.mark.parametrize("target", ELECTIONS)
def test_election_paused_leader_is_fenced_by_its_epoch(tmp_path: Path, target: str) -> None:
    code, results, _ = paused_run(
        tmp_path,
        "election",
        "--target",
        target,
        "--workload",
        "election",
        *LEASE,
        *pause_args(target),
        "--fencing",
        "on",
    )
    election = results["checkers"]["election"]
    assert election["stale_rejected"] and not election["stale_accepted"], election["summary"]
    assert code == 0, election["summary"]


# --- cas-register ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", REGISTERS)
@pytest.mark.parametrize("fault", [False, True])
def test_cas_register(tmp_path: Path, target: str, fault: bool) -> None:
    faults = (
        [
            "--nemesis",
            "client-pause",
            "--pause-at",
            "1",
            "--pause-for",
            "2",
            "--time-limit",
            "4",
            "--recovery-time",
            "1",
        ]
        if fault
        else QUICK
    )
    _, results, run_dir = run(
        tmp_path, "--target", target, "--workload", "cas-register", "--concurrency", "3", *faults
    )
    assert "linearizability" in results["checkers"]
    ops = client_ops(run_dir)
    assert any(op["type"] == "ok" and op["f"] == "cas" for op in ops)
    assert any(op["type"] == "ok" and op["f"] == "read" and op["value"] is not None for op in ops)
