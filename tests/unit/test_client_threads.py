"""Client threads that do the runner's step for their own operation: the loop's ``Bell``
rings only while it sleeps; a thread records its completion and its next invocation
itself, in the history's order (each invocation recorded before its request is sent, its
completion after the answer); an error in a thread's step ends the run with it, never
a hang; a run of client threads writes a history ``harness check`` reads valid."""

from __future__ import annotations

import itertools
import json
import os
import select
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from core import gen
from core.client import Client, Completion, Invocation, WorkerContext
from core.ops import Op
from core.run_clock import RunClock
from core.store import read_history_jsonl
from harness.cli import main
from harness.client_threads import Bell
from harness.runner import Runner


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


def test_the_bell_rings_once_while_the_loop_sleeps_and_never_while_it_is_awake() -> None:
    bell = Bell()
    try:
        bell.ring()  # awake: nothing written
        assert not _readable(bell.fileno())
        bell.asleep = True
        bell.ring()
        bell.ring()  # once: the loop is awake from the first ring on
        assert not bell.asleep and _readable(bell.fileno())
        assert os.read(bell.fileno(), 16) == b"\0"
        bell.asleep = True
        bell.ring()
        bell.drain()
        assert not _readable(bell.fileno())
    finally:
        bell.close()
    bell.asleep = True
    bell.ring()  # closed: its file number may be another file's, nothing written


class _Echo:
    """Answers every operation at once, recording which thread's client it is."""

    def __init__(self, seen: list[tuple[str, int]], process: int) -> None:
        self.seen, self.process = seen, process

    def invoke(self, inv: Invocation) -> Completion:
        self.seen.append(("sent", self.process))
        return Completion("ok", inv.value)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class _EchoFactory:
    seen: list[tuple[str, int]]

    def __call__(self, ctx: WorkerContext) -> Client:
        return _Echo(self.seen, ctx.process)


def _threads_run(
    ops: int, concurrency: int, record: list[Op] | None = None, fail_in_thread: bool = False
) -> tuple[Runner, list[Op], list[str], list[tuple[str, int]]]:
    """A runner of ``concurrency`` client threads for ``ops`` reads, run to its end; the
    ops recorded and the name of the thread that recorded each."""
    history: list[Op] = [] if record is None else record
    recorders: list[str] = []
    seen: list[tuple[str, int]] = []

    def write(op: Op) -> None:
        name = threading.current_thread().name
        if fail_in_thread and name.startswith("client-") and op.type == "invoke":
            raise OSError(28, "No space left on device")
        seen.append(("recorded " + op.type, int(op.process)))
        history.append(op)
        recorders.append(name)

    runner = Runner(
        generator=gen.clients(gen.repeat({"f": "read", "value": 1}, ops)),
        client_factory=_EchoFactory(seen),
        concurrency=concurrency,
        clock=RunClock(),
        record=write,
        threads=True,
    )
    return runner, history, recorders, seen


def test_client_threads_record_their_own_operations_in_the_historys_order() -> None:
    runner, history, recorders, seen = _threads_run(400, 4)
    try:
        runner.run()
    finally:
        runner.close()
    assert len(history) == 800 and runner.stats.ok == 400
    assert [op.index for op in history] == list(range(800))
    assert all(a.time <= b.time for a, b in itertools.pairwise(history))
    by_process: dict[int, list[str]] = {}
    for op in history:
        by_process.setdefault(int(op.process), []).append(op.type)
    for types in by_process.values():  # invoke, ok, invoke, ok ... on every process
        assert types == ["invoke", "ok"] * (len(types) // 2)
    for process in by_process:  # each request sent after its invocation was recorded
        order = [what for what, p in seen if p == process]
        assert order == ["recorded invoke", "sent", "recorded ok"] * (len(order) // 3)
    by_threads = sum(1 for op, name in zip(history, recorders, strict=True) if name != "MainThread")
    assert by_threads >= 0.8 * len(history)  # the common path: no handoff to the loop


def test_an_error_in_a_client_threads_step_ends_the_run_with_it() -> None:
    runner, _, _, _ = _threads_run(400, 4, fail_in_thread=True)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            runner.run()
        except BaseException as e:
            raised.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    runner.close()
    assert not t.is_alive(), "the run hung after a client thread's step failed"
    assert len(raised) == 1 and isinstance(raised[0], OSError)


def test_a_run_of_client_threads_writes_a_history_harness_check_reads_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--workload", "cas-register", "--nemesis", "none", "--clients", "thread"]
    out = tmp_path / "out"
    limits = ["--time-limit", "2", "--recovery-time", "0", "--concurrency", "10"]
    assert main([*args, *limits, "-o", str(out)]) == 0
    (run_dir,) = {p.parent.resolve() for p in out.glob("*/*/test.json")}
    assert json.loads((run_dir / "test.json").read_text())["clients"]["mode"] == "thread"
    history = read_history_jsonl(run_dir / "history.jsonl")
    opened: dict[object, int] = {}
    for op in history:
        if op.process == "nemesis":
            continue
        opened[op.process] = opened.get(op.process, 0) + (1 if op.type == "invoke" else -1)
    assert opened and set(opened.values()) == {0}  # every invocation completed, in the file
    assert sum(1 for op in history if op.type == "ok") > 100
    capsys.readouterr()
    assert main(["check", str(run_dir)]) == 0
    assert "verdict valid" in capsys.readouterr().out
