"""Replay (``harness run --replay RUN_DIR``): the recorded invocations again, in order on
each thread, at their recorded times; the rerun command line of a run's options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import gen
from core.gen.replay import Recorded, replay
from core.options import RunOptions
from harness.cli import build_parser
from harness.commands.run import options_from
from harness.rerun import rerun_argv
from harness.validate import check_run
from tests.support.replay_check import compare, schedule

MS = 1_000_000


def _invocations(history: list) -> list[tuple]:
    return [(o.process, o.f, o.value, o.time // MS) for o in history if o.type == "invoke"]


def test_each_thread_in_its_order_at_its_time() -> None:
    recorded = [
        Recorded(0, 0, "read"),
        Recorded(1, 5 * MS, "write", 3),
        Recorded(0, 20 * MS, "cas", [3, 4]),
        Recorded("nemesis", 10 * MS, "start-kill", {"target": "one"}),
        Recorded("nemesis", 30 * MS, "stop-kill"),
    ]
    history = gen.simulate(replay(recorded, start=100 * MS), 2, latency=1 * MS)
    assert _invocations(history) == [
        (0, "read", None, 100),
        (1, "write", 3, 105),
        ("nemesis", "start-kill", {"target": "one"}, 110),
        (0, "cas", [3, 4], 120),
        ("nemesis", "stop-kill", None, 130),
    ]


def test_a_busy_thread_delays_its_own_next_op_only() -> None:
    """The service answers later than it did: that thread's next op waits for it, the
    other thread keeps its times."""
    recorded = [
        Recorded(0, 0, "read"),
        Recorded(0, 2 * MS, "read"),
        Recorded(1, 4 * MS, "write", 1),
    ]
    history = gen.simulate(replay(recorded, start=0), 2, latency=10 * MS, nemesis=False)
    assert _invocations(history) == [
        (0, "read", None, 0),
        (1, "write", 1, 4),
        (0, "read", None, 10),
    ]


def test_without_a_start_the_first_op_is_issued_at_once_and_the_rest_keep_their_distance() -> None:
    recorded = [Recorded(0, 3000 * MS, "read"), Recorded(1, 3007 * MS, "read")]
    history = gen.simulate(gen.delay(0, replay(recorded, first=3000 * MS)), 2, nemesis=False)
    assert [t for *_, t in _invocations(history)] == [0, 7]


def test_an_op_that_ended_info_gives_its_thread_a_new_process() -> None:
    recorded = [Recorded(0, 0, "write", 1), Recorded(0, 1 * MS, "write", 2)]
    history = gen.simulate(replay(recorded, start=0), 1, nemesis=False, complete=lambda op: "info")
    assert [(p, v) for p, _, v, _ in _invocations(history)] == [(0, 1), (1, 2)]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        [
            "--target",
            "etcd",
            "--workload",
            "cas-register",
            "--read-mode",
            "serializable",
            "--nemesis",
            "partition,pause",
            "--nemesis-target",
            "leader",
            "--seed",
            "9",
        ],
        [
            "--fencing",
            "off",
            "--lease-ttl",
            "5",
            "--keepalive",
            "1",
            "--pause-at",
            "0",
            "--sim-bug",
            "token-reuse",
            "--accept-unavailable",
            "--op-timeout",
            "40",
            "--rate",
            "50",
        ],
        ["--target", "redis", "--persistence", "aof-always", "--nodes", "1", "--name", "x"],
    ],
)
def test_the_rerun_command_gives_the_same_options(argv: list[str]) -> None:
    parser = build_parser("run")
    opts = options_from(parser.parse_args(["run", *argv]))
    again = rerun_argv(opts)
    assert again[:2] == ["harness", "run"]
    assert options_from(parser.parse_args(again[1:])) == opts


def test_the_seed_is_always_on_the_rerun_command() -> None:
    opts = check_run(RunOptions.from_mapping({"seed": 0}))[0]
    assert "--seed" in rerun_argv(opts)  # 0 is a seed, not "no seed"


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
def test_replay_of_a_sim_run_reproduces_its_schedule(tmp_path: Path) -> None:
    """A cas-register run under server pauses on the sim, replayed: the same ops in the
    same order on each thread and the same pauses, each started within 50 ms of when it
    was due: its recorded time after the first, or when its thread's previous op completed
    if the service answered that one later than in the recording (an op never starts on a
    busy thread; ``check_timing``: up to 5% of them later, within 0.5 s, on a loaded
    machine). At a rate, so that ops have room between them."""
    first = _harness(
        "run", "--workload", "cas-register", "--nemesis", "pause", "--nemesis-interval", "1",
        "--time-limit", "4", "--recovery-time", "1", "--rate", "30", "-o", str(tmp_path / "a"),
    )  # fmt: skip
    assert first.returncode in (0, 2), first.stderr[-2000:]  # 2: no op got through a pause
    original = (tmp_path / "a" / "latest").resolve()
    test = json.loads((original / "test.json").read_text())
    assert f"--seed {test['seed']}" in test["command"]  # chosen at random, still recorded
    second = _harness("run", "--replay", str(original), "-o", str(tmp_path / "b"))
    assert second.returncode in (0, 2), second.stderr[-2000:]
    replayed = (tmp_path / "b" / "latest").resolve()
    again = json.loads((replayed / "test.json").read_text())
    assert again["replay_of"] == str(original)
    assert again["command"] == f"harness run --replay {original} --target sim"
    kept = compare(original, replayed, tolerance_ms=50)
    assert not kept.wrong, "\n".join(kept.wrong[:20])
    print(kept.summary())
    kept.check_timing()
    pauses = [(r.f, r.value) for r in schedule(original)["nemesis"]]
    assert pauses[:2] == [("start-pause", {"target": "sim"}), ("stop-pause", None)]
    report = (replayed / "report.html").read_text()
    assert "replay of" in report and str(original) in report
    # issue 30: the replay says how late it ran, in test.json and on the console
    late = again["replay"]
    assert late["issued"] == late["recorded"] > 0, late
    assert late["on_time"] >= 0.9 * late["issued"] and late["p50_ms"] <= 50, late
    assert f"replay: {late['issued']} of {late['recorded']} recorded invocations issued" in (
        second.stdout
    )


def test_replay_of_what_is_not_a_run_is_one_line(tmp_path: Path) -> None:
    out = _harness("run", "--replay", str(tmp_path), "-o", str(tmp_path / "out"))
    assert out.returncode == 254
    assert out.stderr.count("\n") == 1 and "no test.json there" in out.stderr


def test_faults_are_aimed_at_the_nodes_they_hit_on_their_own_target_only() -> None:
    from core.ops import Op
    from harness.replay import Recording, recorded

    ops = [
        Op(0, 1_000, "nemesis", "invoke", "start-pause", {"target": "one"}),
        Op(1, 1_500, 4, "invoke", "read"),
        Op(2, 2_000, "nemesis", "ok", "start-pause", {"target": "one", "nodes": ["n2"]}),
        Op(3, 3_000, "nemesis", "invoke", "start-partition", {"topology": "halves"}),
        Op(4, 4_000, "nemesis", "ok", "start-partition", {"grudge": {"n1": ["n2"]}}),
    ]
    clients, faults, aimed = recorded(ops, start_ns=500, concurrency=3)
    assert clients == [Recorded(1, 1_000, "read")]  # process 4 ran on thread 1
    assert [r.value for r in faults] == [{"target": "one"}, {"topology": "halves"}]
    assert [r.value for r in aimed] == [{"target": "n2"}, {"topology": "halves"}]
    rec = Recording(Path("x"), RunOptions.of(target="etcd"), (), tuple(faults), tuple(aimed))
    assert rec.on("etcd").faults == tuple(aimed)
    assert rec.on("zookeeper").faults == tuple(faults)  # other nodes there: as asked
