"""How a run's clients run (``--clients process|thread|auto``): auto picks threads on the
sim with no fault aimed at a client, processes otherwise; a thread-mode run is checked
as a process-mode one is (a valid history valid, a sim bug still found); a thread whose
operation timed out is abandoned, its late answer recorded; a replay keeps the mode."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from core import gen
from core.client import Client, Completion, Invocation, WorkerContext
from core.ops import Op
from core.options import RunOptions
from core.run_clock import RunClock
from core.store import read_jsonl
from harness.cli import EXIT_BAD_ARGS, main
from harness.client_mode import client_mode
from harness.runner import Runner
from harness.validate import check_run

SIM_CAS = ["run", "--workload", "cas-register", "--time-limit", "1.5", "--recovery-time", "0"]


def _test_json(out: Path) -> dict[str, object]:
    (run_dir,) = {p.parent.resolve() for p in out.glob("*/*/test.json")}
    return dict(json.loads((run_dir / "test.json").read_text()))


def _mode(**asked: object) -> tuple[str, str]:
    opts, target = check_run(RunOptions.of(**asked))
    return tuple(client_mode(opts, target))  # type: ignore[return-value]


def test_auto_picks_threads_only_on_the_sim_with_no_client_fault() -> None:
    assert _mode(workload="cas-register", nemesis=["none"]) == (
        "thread",
        "auto: sim, no client fault",
    )
    assert _mode(workload="cas-register", nemesis=["kill"])[0] == "thread"  # at the server
    for fault in ("client-pause", "client-kill"):  # aimed at a client process
        mode, why = _mode(nemesis=[fault])
        assert mode == "process" and f"--nemesis {fault} acts on a client process" in why
    assert _mode(workload="cas-register", nemesis=["none"], clients="process") == (
        "process",
        "asked",
    )


def test_a_real_target_keeps_processes_under_auto_and_takes_threads_when_asked() -> None:
    mode, why = _mode(target="etcd", workload="election", nemesis=["none"])
    assert mode == "process" and "election on etcd is not measured with threads yet" in why
    asked = {"target": "etcd", "workload": "election", "nemesis": ["none"]}
    assert _mode(**asked, clients="thread") == ("thread", "asked")


def test_a_workload_measured_with_threads_on_a_real_target_takes_them_under_auto() -> None:
    """etcd's cas-register, measured in threads under a partition and a kill (valid,
    1,125 and 1,371 ops/s where processes gave 775): threads under auto, but processes
    still where a fault acts on a client."""
    assert _mode(target="etcd", workload="cas-register", nemesis=["partition"]) == (
        "thread",
        "auto: etcd, no client fault",
    )
    paused = _mode(target="etcd", workload="cas-register", nemesis=["client-pause"])
    assert paused[0] == "process" and "client-pause acts on a client process" in paused[1]


def test_threads_asked_where_a_process_is_needed_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*SIM_CAS[:1], "--nemesis", "client-pause", "--clients", "thread"]) == (
        EXIT_BAD_ARGS
    )
    err = capsys.readouterr().err.strip()
    assert err == (
        "harness: --clients thread cannot run these clients: --nemesis client-pause acts on "
        "a client process, and a thread cannot be frozen, killed or run by another Python "
        "alone; give --clients process or auto"
    )
    with pytest.raises(SystemExit) as bad:
        main(["run", "--clients", "threads"])
    assert bad.value.code == EXIT_BAD_ARGS
    assert "unknown clients 'threads'; did you mean 'thread'?" in capsys.readouterr().err


def test_a_sim_run_with_a_client_pause_runs_its_clients_in_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--nemesis", "client-pause", "--time-limit", "4", "--recovery-time", "0"]
    short = ["--lease-ttl", "1", "--keepalive", "0.3", "--acquire-wait", "0.5"]
    main([*args, *short, "--concurrency", "1", "--work-time", "0.05", "-o", str(tmp_path)])
    test = _test_json(tmp_path)
    assert test["clients"] == {
        "mode": "process",
        "why": "auto: --nemesis client-pause acts on a client process",
    }
    assert "clients in processes (auto: --nemesis client-pause" in capsys.readouterr().err


def test_a_sim_run_without_faults_runs_its_clients_in_threads_and_checks_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*SIM_CAS, "--nemesis", "none", "--concurrency", "8", "-o", str(tmp_path)]) == 0
    test = _test_json(tmp_path)
    assert test["clients"] == {"mode": "thread", "why": "auto: sim, no client fault"}
    err = capsys.readouterr().err
    assert "seed" in err and "clients in threads (auto: sim, no client fault)" in err
    load = test["load"]
    assert isinstance(load, dict) and load["client_ops"] > 0
    assert load["harness_cpu_s"]["workers"] == 0  # the clients' CPU is the harness's own
    assert load["harness_cpu_s"]["runner"] > 0


def test_a_sim_bug_is_still_found_with_clients_in_threads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*SIM_CAS, "--nemesis", "none", "--sim-bug", "stale-read", "--seed", "3"]
    assert main([*args, "--concurrency", "8", "-o", str(tmp_path)]) == 1
    assert _test_json(tmp_path)["clients"]["mode"] == "thread"  # type: ignore[index]
    assert "linearizability: INVALID - " in capsys.readouterr().out  # the bug, named


def test_a_replay_runs_its_clients_as_the_recorded_run_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    assert main([*SIM_CAS, "--nemesis", "none", "-o", str(first)]) == 0
    (run_dir,) = {p.parent.resolve() for p in first.glob("*/*/test.json")}
    again = tmp_path / "again"
    assert main(["run", "--replay", str(run_dir), "-o", str(again)]) == 0
    assert _test_json(again)["clients"] == {"mode": "thread", "why": "as the recorded run's"}
    capsys.readouterr()


class _Stuck:
    """A client whose ``slow`` operation returns only once ``go`` is set."""

    def __init__(self, go: threading.Event) -> None:
        self.go = go

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == "slow":
            self.go.wait(10)
            return Completion("ok", "late")
        return Completion("ok", inv.value)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class _StuckFactory:
    go: threading.Event

    def __call__(self, ctx: WorkerContext) -> Client:
        return _Stuck(self.go)


def test_a_client_thread_that_times_out_is_abandoned_and_its_late_answer_recorded(
    tmp_path: Path,
) -> None:
    go = threading.Event()
    ops: list[Op] = []
    events = tmp_path / "events.jsonl"
    runner = Runner(
        generator=gen.clients([gen.once({"f": "slow"}), gen.once({"f": "read", "value": 1})]),
        client_factory=_StuckFactory(go),
        concurrency=1,
        clock=RunClock(),
        record=ops.append,
        op_timeout=0.2,
        events_path=events,
        threads=True,
    )
    try:
        runner.run()  # the slow op times out; a fresh client thread reads
        assert runner.client_pids() == {}  # no process a fault could signal
        go.set()  # the abandoned thread's op returns now
        deadline = RunClock().now() + 5_000_000_000
        while runner._abandoned and RunClock().now() < deadline:
            time.sleep(0.01)  # its thread records the late answer itself
    finally:
        runner.close()
    done = [(op.process, op.f, op.type, op.error) for op in ops if op.type != "invoke"]
    assert done == [(0, "slow", "info", "timed out"), (1, "read", "ok", None)]
    said = {e["event"]: e for e in read_jsonl(events)}
    assert said["late-completion"]["type"] == "ok" and said["late-completion"]["value"] == "late"
    assert said["worker-stopped"]["process"] == 0


def test_a_client_thread_still_in_its_operation_at_the_end_is_said_to_be_running(
    tmp_path: Path,
) -> None:
    go = threading.Event()
    events = tmp_path / "events.jsonl"
    runner = Runner(
        generator=gen.clients(gen.once({"f": "slow"})),
        client_factory=_StuckFactory(go),
        concurrency=1,
        clock=RunClock(),
        record=lambda op: None,
        op_timeout=0.2,
        events_path=events,
        threads=True,
    )
    try:
        runner.run()
    finally:
        runner.close()  # its thread cannot be killed: it is left running, and said so
        go.set()
    (stopped,) = [e for e in read_jsonl(events) if e["event"] == "worker-stopped"]
    assert "a client thread, which cannot be killed: it may still be running" in (stopped["reason"])
