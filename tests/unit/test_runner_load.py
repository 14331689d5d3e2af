"""The load a run achieved: recorded with the harness's CPU for it, warned when far below
the rate asked, a floor (``--min-rate``, a suite's ``min_rate``) that makes a run below it
unknown; and the history written in batches that a kill -9 cuts at most a few ms short."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import gen
from core.client import Completion, Invocation
from core.gen.replay import Recorded, replay
from core.ops import Op
from core.run_clock import RunClock
from core.store import HistoryWriter, read_history_jsonl
from harness.cli import EXIT_BAD_ARGS, main
from harness.load import Load, process_cpu_s
from harness.runner import Runner
from tests.support.chatty import ChattyFactory

SIM_CAS = ["run", "--workload", "cas-register", "--time-limit", "1.5", "--recovery-time", "0"]


def _results(out: Path) -> tuple[dict[str, object], dict[str, object]]:
    (run_dir,) = {p.parent.resolve() for p in out.glob("*/*/results.json")}
    test = json.loads((run_dir / "test.json").read_text())
    return json.loads((run_dir / "results.json").read_text()), test


def test_a_run_below_its_min_rate_is_unknown_with_the_rate_it_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*SIM_CAS, "--rate", "1000000", "--min-rate", "1000000", "--clients", "process"]
    code = main([*args, "-o", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2
    results, test = _results(tmp_path)
    assert results["verdict"] == "unknown"
    floor = results["checkers"]["load"]  # type: ignore[index]
    assert floor["valid"] == "unknown" and floor["min_rate"] == 1000000
    assert "below the floor of 1000000 asked (--min-rate)" in out
    assert 0 < floor["ops_per_s"] < 1000000
    load = results["load"]
    assert isinstance(load, dict) and load["client_ops"] > 0 and load["ops_per_s"] > 0
    assert load["harness_cpu_us_per_op"] > 0 and load["harness_cpu_s"]["workers"] > 0
    assert load["asked_rate"] == 1000000
    # far below the rate asked: a warning on the console and in test.json
    assert "warning: the run achieved" in err and "of the 1000000 asked" in err
    assert any("of the 1000000 asked" in w for w in test["warnings"])  # type: ignore[attr-defined]


def test_a_run_at_or_above_its_min_rate_is_judged_by_its_checkers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*SIM_CAS, "--min-rate", "1", "-o", str(tmp_path)]) == 0
    results, test = _results(tmp_path)
    assert results["checkers"]["load"]["valid"] is True  # type: ignore[index]
    assert "warnings" not in test  # no rate asked: none to fall short of
    assert "load: " in capsys.readouterr().err


def test_a_run_without_a_floor_has_no_load_checker_but_records_its_load(tmp_path: Path) -> None:
    assert main([*SIM_CAS, "-o", str(tmp_path)]) == 0
    results, _ = _results(tmp_path)
    assert "load" not in results["checkers"]  # type: ignore[operator]
    assert results["load"]["client_ops"] > 0  # type: ignore[index]


def test_a_min_rate_above_the_rate_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["run", "--rate", "100", "--min-rate", "500"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_ARGS
    assert err.strip() == (
        "harness: --min-rate 500 is above --rate 100: no run at that rate can reach it; "
        "give a --min-rate at most the --rate"
    )


def test_a_suites_min_rate_is_the_runs_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[suite]\nname = "floor"\n[[run]]\nname = "too-fast"\nworkload = "cas-register"\n'
        'time_limit = 1.5\nrecovery_time = 0\nmin_rate = 1000000\nexpect = "unknown"\n'
    )
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "out")]) == 0
    (test_json,) = {p.resolve() for p in (tmp_path / "out").glob("**/test.json")}
    assert json.loads(test_json.read_text())["options"]["min_rate"] == 1000000
    (results,) = {p.resolve() for p in (tmp_path / "out").glob("**/results.json")}
    assert json.loads(results.read_text())["checkers"]["load"]["valid"] == "unknown"
    capsys.readouterr()


def test_a_far_lower_rate_is_warned_and_a_near_one_is_not() -> None:
    slow = Load(ops=100, seconds=1.0, asked_rate=1000, runner_cpu_s=0.01, workers_cpu_s=0.02)
    assert "100 ops/s of the 1000 asked (10%)" in (slow.warning() or "")
    near = Load(ops=600, seconds=1.0, asked_rate=1000, runner_cpu_s=0.01, workers_cpu_s=0.02)
    assert near.warning() is None
    assert Load(5, 1.0, None, 0.0, 0.0).warning() is None
    assert slow.cpu_us_per_op() == pytest.approx(300.0)


def test_a_process_cpu_is_read_from_proc() -> None:
    start = process_cpu_s(os.getpid())
    assert start is not None
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    assert (process_cpu_s(os.getpid()) or 0.0) >= start
    assert process_cpu_s(2**22 + 12345) is None  # no such process


def _op(i: int) -> Op:
    return Op(index=i, time=i, process=0, type="invoke" if i % 2 == 0 else "ok", f="read")


def test_a_batched_history_reaches_the_file_on_flush_and_close(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    w = HistoryWriter(path, batched=True)
    w.write(_op(0))
    w.write(_op(1))
    assert path.read_bytes() == b""  # kept until flushed
    w.flush()
    assert [op.index for op in read_history_jsonl(path)] == [0, 1]
    w.write(_op(2))
    w.write(_op(3))
    w.close()  # what is kept is written first
    assert [op.index for op in read_history_jsonl(path)] == [0, 1, 2, 3]


@pytest.mark.parametrize("clients", ["process", "thread"])
def test_a_runner_killed_mid_run_leaves_a_history_check_reads_cut_at_most_ms_short(
    tmp_path: Path, clients: str
) -> None:
    """kill -9 of the harness mid-run, its clients in processes or in threads: the
    history on disk holds whole lines up to the last flush, no more than FLUSH_NS (plus
    the loop's own delay) before the kill."""
    out = tmp_path / "out"
    harness = Path(sys.executable).parent / "harness"
    args = [*SIM_CAS[:-4], "--concurrency", "5", "--time-limit", "60", "--clients", clients]
    proc = subprocess.Popen(
        [str(harness), *args, "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        history: Path | None = None
        while time.monotonic() < deadline:
            found = [p for p in out.glob("*/*/history.jsonl") if "latest" not in p.parts]
            if found and found[0].stat().st_size > 20_000:
                history = found[0]
                break
            time.sleep(0.05)
        assert history is not None, "the run wrote no history within 60 s"
        test = json.loads((history.parent / "test.json").read_text())
        assert test["clients"]["mode"] == clients
        origin = test["clock_origin_ns"]
        proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic_ns() - origin
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert history.read_bytes().endswith(b"\n")  # whole lines only
    last = max(op.time for op in read_history_jsonl(history))
    assert killed_at - last < 1_000_000_000  # ms short, never the batch of a whole run
    code = subprocess.run(
        [str(harness), "check", str(history.parent)], capture_output=True, check=False
    ).returncode
    assert code in (0, 2)  # checked: valid, or unknown as a run killed unfinished


class _LookingNemesis:
    """A nemesis that, when invoked, reads what the history file holds."""

    def __init__(self, history: Path) -> None:
        self.history = history
        self.seen: list[list[str]] = []

    def fs(self) -> frozenset[str]:
        return frozenset({"start-look"})

    def setup(self, view: object) -> None:
        pass

    def invoke(self, inv: Invocation) -> Completion:
        self.seen.append([op.f for op in read_history_jsonl(self.history)])
        return Completion("ok")

    def teardown(self) -> None:
        pass


def test_a_batched_history_is_on_disk_up_to_a_fault_before_the_fault_is_invoked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.jsonl"
    writer = HistoryWriter(path, batched=True)
    nemesis = _LookingNemesis(path)
    runner = Runner(
        generator=gen.nemesis(gen.once({"f": "start-look"})),
        client_factory=None,  # type: ignore[arg-type]
        concurrency=0,
        clock=RunClock(),
        record=writer.write,
        flush=writer.flush,
        nemesis=nemesis,
    )
    try:
        runner.run()
    finally:
        runner.close()
        writer.close()
    assert nemesis.seen == [["start-look"]]  # its own invocation was written before it ran
    assert [op.type for op in read_history_jsonl(path)] == ["invoke", "ok"]


def test_a_replay_whose_every_thread_ended_ends_the_run(tmp_path: Path) -> None:
    """Every client thread of a replay ended where its recording ended (their workers
    stopped): with no thread left, "no thread is free" held for ever and the runner
    waited for events that would never come (a hung `run --replay`, 1 run in 3). The
    generator is asked, says it is done, and the run ends."""
    recorded = [Recorded(0, 0, "read"), Recorded(1, 1_000_000, "read")]
    path = tmp_path / "history.jsonl"
    writer = HistoryWriter(path, batched=True)
    runner = Runner(
        generator=replay(recorded, ends={0: 0, 1: 0}),
        client_factory=ChattyFactory(),
        concurrency=2,
        clock=RunClock(),
        record=writer.write,
        flush=writer.flush,
    )
    done = threading.Event()

    def run() -> None:
        try:
            runner.run()
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    try:
        assert done.wait(20), "the runner did not end once every replayed thread had ended"
    finally:
        runner.close()
        writer.close()
    assert sorted(op.type for op in read_history_jsonl(path)) == ["invoke", "invoke", "ok", "ok"]
