"""``--nemesis-target holder`` on every workload that has a holder, from the command line
on sim (issue 30, item 1): the registry's instance and the watch's writer have no write
to wait for, so a fault aimed at them takes effect at once; before, the lookup waited up
to 5 s for a write a registry instance never begins, and the window was eaten by it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_cli import run

from core.ops import NEMESIS
from core.run_clock import RunClock
from core.store import HISTORY_FILE, read_history_jsonl
from nemesis.client_pause import ClientPause
from workloads.holders import INSTANCE

LAG_S = 0.5
"""The most a start may take on sim: the fault's own cost, no lookup."""


def start_lags(run_dir: Path) -> list[float]:
    """Each fault start's seconds from its invocation to its answer, in order."""
    invoked: dict[str, int] = {}
    lags = []
    for op in read_history_jsonl(run_dir / HISTORY_FILE):
        if op.process != NEMESIS or not op.f.startswith("start-"):
            continue
        if op.type == "invoke":
            invoked[op.f] = op.time
        else:
            assert op.type == "ok", op
            lags.append((op.time - invoked[op.f]) / 1e9)
    return lags


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["registry", "watch", "election"])
def test_a_fault_aimed_at_the_holder_takes_effect_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workload: str
) -> None:
    code, out, err = run(
        capsys,
        *("run", "--workload", workload, "--nemesis", "pause", "--nemesis-target", "holder"),
        *("--time-limit", "8", "--nemesis-interval", "1.5", "--recovery-time", "1"),
        *("-o", str(tmp_path)),
    )
    assert code == 0, out + err
    lags = start_lags(tmp_path / "latest")
    assert len(lags) >= 2 and max(lags) < LAG_S, lags


class _Instances:
    """A registry run as a client pause sees it: instance 3 registered, never working."""

    holder = INSTANCE

    def __init__(self) -> None:
        self.clock = RunClock()

    def client_pids(self) -> dict[int, int]:
        return {3: 999_999_999}

    def holders(self) -> list[int]:
        return [3]

    def working_since(self, process: int) -> int | None:
        return None

    def node_of(self, process: int) -> str | None:
        return None


def test_a_client_pause_takes_a_holder_without_work_at_once() -> None:
    pause = ClientPause(holder_wait=5.0)
    pause.setup(_Instances())
    started = time.monotonic()
    assert pause._victims("holder") == {3: 999_999_999}
    assert time.monotonic() - started < 0.1  # not the 5 s a critical section may take


class _Starting(_Instances):
    """A run whose process 5 is a replacement worker, ready only ``after`` s from now."""

    def __init__(self, after: float) -> None:
        super().__init__()
        self.ready = time.monotonic() + after

    def client_pids(self) -> dict[int, int]:
        return {5: 4242} if time.monotonic() >= self.ready else {}


def test_a_fault_aimed_at_a_process_waits_for_its_replacement_worker() -> None:
    """Issue 30: an etcd replay ended unknown with "no live client process to pause": the
    recorded victim's thread had a replacement worker, not ready 166 ms later. The pause
    now waits for the named process's worker to be up, within ``process_wait``."""
    pause = ClientPause(process_wait=2.0)
    pause.setup(_Starting(after=0.2))
    started = time.monotonic()
    assert pause._victims(5) == {5: 4242}
    assert 0.15 <= time.monotonic() - started < 1.0
    never = ClientPause(process_wait=0.1)
    never.setup(_Starting(after=60))
    assert never._victims(5) == {}
    assert never._pause({"target": 5}).error == "no live client process to pause"
