"""Replay (``harness run --replay RUN_DIR``): the recorded invocations again, in order on
each thread, at their recorded times; the rerun command line of a run's options."""

from __future__ import annotations

import dataclasses
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


# --- issue 30: a replay aims its faults at what they hit, ends its threads where the
# recording ended, and says how late it was and why ---


def test_a_client_fault_is_aimed_at_the_thread_it_hit_on_any_target() -> None:
    """The recorded pause of process 4 (thread 1 of 3), asked for the ``holder`` and found
    it 2.5 s later: replayed at process 4's thread, when it took effect, on its own target
    and on another (client processes are the harness's, not the cluster's)."""
    from core.ops import Op
    from harness.replay import Recording, recorded

    ops = [
        Op(0, 1_000, "nemesis", "invoke", "start-client-pause", {"target": "holder"}),
        Op(1, 2_501_000, "nemesis", "ok", "start-client-pause", {"processes": [4], "pids": [9]}),
        Op(2, 3_000_000, "nemesis", "invoke", "start-kill", {"target": "one"}),
        Op(3, 3_400_000, "nemesis", "ok", "start-kill", {"target": "one", "nodes": ["n3"]}),
    ]
    _, faults, aimed = recorded(ops, start_ns=0, concurrency=3)
    assert aimed[0] == Recorded("nemesis", 2_501_000, "start-client-pause", {"target": 4}, victim=1)
    assert aimed[1].at == 3_000_000 and aimed[1].value == {"target": "n3"}  # no wait: as asked
    rec = Recording(Path("x"), RunOptions.of(target="sim"), (), tuple(faults), tuple(aimed))
    assert rec.on("sim").faults == tuple(aimed)
    assert rec.on("etcd").faults == (aimed[0], faults[1])  # another cluster's nodes differ


def test_a_client_fault_hits_whichever_process_runs_its_thread_now() -> None:
    """Thread 0's first op ended info, so process 2 runs it when the pause is due: the
    pause is aimed at process 2, not at the recorded process 0 (gone)."""
    recorded = [
        Recorded(0, 0, "write", 1),
        Recorded(0, 5 * MS, "write", 2),
        Recorded("nemesis", 10 * MS, "start-client-pause", {"target": 0}, victim=0),
    ]
    history = gen.simulate(
        replay(recorded, start=0),
        2,
        latency=1 * MS,
        complete=lambda op: "info" if op.value == 1 else "ok",
    )
    pause = [o for o in history if o.f == "start-client-pause" and o.type == "invoke"]
    assert pause[0].value == {"target": 2}


@pytest.mark.parametrize(
    ("catch_up", "into_ms", "hit_ms"),
    [
        # Recorded: thread 0's write began at 10 ms and the pause hit it 3 ms in. Replayed
        # with thread 0's first op answered at 40 ms (later than recorded), the pause is
        # issued 3 ms into the write, at 43 ms, not at 13 ms while the thread was still in
        # its first op.
        (False, 3, 43),
        # The write is a holder's work that catches up: issued 30 ms late, it is 30 ms
        # shorter, so the pause recorded 35 ms into it (at 45 ms) hits it at 45 ms, 5 ms
        # into the shortened work, not 35 ms into it (at 75 ms, perhaps after it ended).
        (True, 35, 45),
    ],
)
def test_a_client_fault_waits_for_the_op_it_hit_and_as_far_into_it(
    catch_up: bool, into_ms: int, hit_ms: int
) -> None:
    recorded = [
        Recorded(0, 0, "acquire"),
        Recorded(0, 10 * MS, "write", {}, catch_up=catch_up),
        Recorded("nemesis", (10 + into_ms) * MS, "start-client-pause", {"target": 0}, victim=0,
                 during=1, into=into_ms * MS),
    ]  # fmt: skip
    history = gen.simulate(
        replay(recorded, start=0), 1, latency=lambda op: 40 * MS if op.f == "acquire" else MS
    )
    assert [(o.f, o.time // MS) for o in history if o.type == "invoke"] == [
        ("acquire", 0),
        ("write", 40),
        ("start-client-pause", hit_ms),
    ]


def test_a_fault_started_late_still_lasts_its_recorded_time() -> None:
    """The pause's start waited for its victim's op until 40 ms (recorded: 13 ms); its
    stop, recorded 100 ms after the start took effect, comes 100 ms after the late start,
    not at its recorded 113 ms (a pause cut to 73 ms)."""
    recorded = [
        Recorded(0, 0, "acquire"),
        Recorded(0, 10 * MS, "write"),
        Recorded("nemesis", 13 * MS, "start-client-pause", {"target": 0}, victim=0, during=1),
        Recorded("nemesis", 113 * MS, "stop-client-pause", after=100 * MS),
    ]
    history = gen.simulate(
        replay(recorded, start=0), 1, latency=lambda op: 40 * MS if op.f == "acquire" else 0
    )
    nemesis = [(o.f, o.time // MS) for o in history if o.process == "nemesis"]
    assert nemesis == [
        ("start-client-pause", 40),
        ("start-client-pause", 40),
        ("stop-client-pause", 140),
        ("stop-client-pause", 140),
    ]


def test_the_op_a_client_fault_hit_is_recorded() -> None:
    from core.ops import Op
    from harness.replay import recorded

    ops = [
        Op(0, 0, 1, "invoke", "acquire"),
        Op(1, 5 * MS, 1, "ok", "acquire"),
        Op(2, 6 * MS, 1, "invoke", "write"),
        Op(3, 7 * MS, "nemesis", "invoke", "start-client-pause", {"target": "holder"}),
        Op(4, 60 * MS, "nemesis", "ok", "start-client-pause", {"processes": [1]}),
    ]
    aimed = recorded(ops, start_ns=0, concurrency=2)[2]
    assert (aimed[0].victim, aimed[0].during, aimed[0].into, aimed[0].at) == (
        1,
        1,
        54 * MS,
        60 * MS,
    )


def test_a_thread_is_ended_once_its_ops_are_done_and_its_recording_has_ended() -> None:
    r = replay(
        [Recorded(0, 0, "read"), Recorded(1, 0, "read"), Recorded(1, 50 * MS, "read")],
        start=0,
        ends={0: 20 * MS, 1: 20 * MS, 2: 20 * MS},
    )
    assert r.ended(10 * MS) == frozenset()
    r = dataclasses.replace(r, done=(1, 1))  # thread 0 done, thread 1 has one op left
    assert r.ended(30 * MS) == {0, 2}  # thread 2 recorded nothing: ended at the end too


def _op(i: int, ms: float, process: object, kind: str, f: str = "read") -> object:
    from core.ops import Op

    return Op(i, int(ms * MS), process, kind, f)  # type: ignore[arg-type]


def test_lateness_tells_what_waited_for_its_thread_from_what_the_harness_issued_late() -> None:
    """Thread 0's second op is due at 10 ms but its first answered at 200 ms (held by the
    service); thread 1's op is due at 20 ms and the harness issued it at 120 ms."""
    from harness.replay import Recording, lateness, lateness_line

    rec = Recording(
        Path("x"),
        RunOptions.of(),
        (Recorded(0, 0, "read"), Recorded(0, 10 * MS, "read"), Recorded(1, 20 * MS, "read")),
        (),
    )
    ops = [
        _op(0, 0, 0, "invoke"),
        _op(1, 200, 0, "ok"),
        _op(2, 201, 0, "invoke"),
        _op(3, 120, 1, "invoke"),
    ]
    ops.sort(key=lambda o: o.time)  # type: ignore[attr-defined]
    facts = lateness(rec, ops, concurrency=2)  # type: ignore[arg-type]
    assert (facts["issued"], facts["on_time"], facts["held"], facts["late"]) == (3, 1, 1, 1)
    assert facts["on_cue"] == 2
    assert facts["max_ms"] == 191.0 and facts["latest"]["thread"] == 0
    assert facts["first_held"] == {
        "thread": 0, "f": "read", "at_s": 0.01, "after": "read", "by_ms": 190.0
    }  # fmt: skip
    line = lateness_line(facts)
    assert (
        "replay: 3 of 3 recorded invocations issued: 1 (33%) on time (within 50 ms of their "
        "recorded time), 1 held by their thread's previous op (answered later than "
        "recorded; the first: thread 0's read at 0.010 s, its read answered 190 ms late), "
        "1 late by the harness; late by p50 100 ms"
    ) in line
    assert "below 95%: not a faithful replay" in line


def _write_recording(run: Path, concurrency: int, history: list[dict]) -> None:
    """A run directory by hand: the lock workload on the sim, ``history`` at times in ms
    after the workload's start (1 s on the run clock)."""
    run.mkdir(parents=True)
    opts = RunOptions.of(
        target="sim", workload="lock", concurrency=concurrency, seed=3, nemesis=("none",)
    )
    test = {"options": opts.to_dict(), "seed": 3, "workload_start_ns": 1_000_000_000}
    (run / "test.json").write_text(json.dumps(test))
    lines = [
        json.dumps({**h, "index": i, "time": 1_000_000_000 + int(h["time"] * MS)})
        for i, h in enumerate(history)
    ]
    (run / "history.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.slow
def test_a_thread_whose_recording_ends_holding_lets_go_where_it_ended(tmp_path: Path) -> None:
    """Process 0's last recorded op is an acquire it got; the recording ends at 1.5 s, with
    process 1's acquire granted then (process 0 let go at the run's end). Replayed, process
    0's worker closes at 1.5 s (not when the whole replay ends) and process 1 is granted
    the lock then, not after its 5 s acquire wait."""
    lock = {"name": "lock-0"}
    _write_recording(
        tmp_path / "rec",
        2,
        [
            {"process": 0, "type": "invoke", "f": "acquire", "value": lock, "time": 0},
            {"process": 0, "type": "ok", "f": "acquire", "value": lock, "time": 5},
            {"process": 1, "type": "invoke", "f": "acquire", "value": lock, "time": 100},
            {"process": 1, "type": "ok", "f": "acquire", "value": lock, "time": 1500},
        ],
    )
    out = _harness("run", "--replay", str(tmp_path / "rec"), "-o", str(tmp_path / "b"))
    assert out.returncode in (0, 2), out.stderr[-2000:]
    run = (tmp_path / "b" / "latest").resolve()
    ops = [json.loads(line) for line in (run / "history.jsonl").read_text().splitlines()]
    got = [o for o in ops if o["process"] == 1 and o["f"] == "acquire"]
    assert [o["type"] for o in got] == ["invoke", "ok"], got
    waited_s = (got[1]["time"] - got[0]["time"]) / 1e9
    assert 1.2 <= waited_s <= 3.0, waited_s  # the recorded end (1.4 s after), not 5 s
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    ended = [e for e in events if e["event"] == "worker-stopped" and e["process"] == 0]
    assert ended and ended[0]["reason"] == "its recording ended (replay)"
    closed = [e for e in events if e["event"] == "lease-ended" and e["process"] == 0]
    assert closed and closed[0]["reason"] == "closed"
    late = json.loads((run / "test.json").read_text())["replay"]
    assert late["issued"] == late["recorded"] == 2
    assert "replay: 2 of 2 recorded invocations issued" in out.stdout


# --- issue 30: a replay that replays (the lock workload on sim went from 24% to 98% on time)


def test_an_acquire_that_lost_a_race_is_issued_after_the_one_that_won() -> None:
    """Thread 0 asked for the lock 0.2 ms before thread 1 but reached the service after
    it: thread 1 was granted first. Replayed, thread 0's acquire follows thread 1's."""
    recorded = [
        Recorded(0, 0, "acquire", follows=((1, 0),)),
        Recorded(1, MS // 5, "acquire"),
    ]
    history = gen.simulate(replay(recorded, start=0), 2, latency=1 * MS, nemesis=False)
    assert _invocations(history) == [(1, "acquire", None, 0), (0, "acquire", None, 20)]


def test_the_race_is_read_from_the_recorded_grants() -> None:
    from core.ops import Op
    from harness.replay import recorded

    lock = {"name": "lock-0"}
    ops = [
        Op(0, 0, 0, "invoke", "acquire", lock),
        Op(1, MS // 5, 1, "invoke", "acquire", lock),
        Op(2, 5 * MS, 1, "ok", "acquire", lock),
        Op(3, 300 * MS, 0, "ok", "acquire", lock),
        Op(4, 301 * MS, 0, "invoke", "write", lock),
    ]
    clients, _, _ = recorded(ops, 0, 2, frozenset({"acquire"}), frozenset({"write"}))
    assert [(r.thread, r.f, r.follows, r.catch_up) for r in clients] == [
        (0, "acquire", ((1, 0),), False),
        (1, "acquire", (), False),
        (0, "write", (), True),
    ]


def test_a_holders_work_issued_late_is_told_how_late() -> None:
    """The acquire was answered 10 ms later than recorded: the write (the holder's work)
    is issued 9 ms late and says so, for the client to shorten its work by as much."""
    from core.gen.replay import BEHIND

    recorded = [
        Recorded(0, 0, "acquire"),
        Recorded(0, 1 * MS, "write", {"name": "l"}, catch_up=True),
        Recorded(0, 30 * MS, "write", {"name": "l"}, catch_up=True),
    ]
    history = gen.simulate(replay(recorded, start=0), 1, latency=10 * MS, nemesis=False)
    writes = [o.value for o in history if o.type == "invoke" and o.f == "write"]
    assert writes == [{"name": "l", BEHIND: 0.009}, {"name": "l"}]  # the second on time


def test_the_client_shortens_its_work_by_how_late_it_was_issued(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from core.gen.replay import BEHIND
    from workloads.common import holder

    seen: list[tuple[object, float]] = []

    def fenced(res: object, session: object, w: object, name: object, n: object,
               value: object, work: float, *rest: object) -> object:  # fmt: skip
        seen.append((value, work))
        return SimpleNamespace(type="ok", value=None, error=None)

    monkeypatch.setattr(holder, "fenced_write", fenced)
    client = holder.HolderClient.__new__(holder.HolderClient)
    client.session, client.work, client.node = object(), 0.3, None  # type: ignore[assignment]
    client.resource, client.ctx, client.held, client.number = (
        None,
        SimpleNamespace(process=1),
        "l",
        4,
    )  # type: ignore[assignment]
    client.number_key, client.check = "token", True
    client._write({"name": "l", BEHIND: 0.1})
    client._write({"name": "l", BEHIND: 2.0})
    client._write({"name": "l"})
    assert seen == [({"name": "l"}, pytest.approx(0.2)), ({"name": "l"}, 0.0), ({"name": "l"}, 0.3)]


def test_lateness_counts_the_works_shortened_to_catch_up() -> None:
    from core.gen.replay import BEHIND
    from core.ops import Op
    from harness.replay import Recording, lateness, lateness_line

    rec = Recording(
        Path("x"),
        RunOptions.of(),
        (Recorded(0, 0, "acquire"), Recorded(0, 1 * MS, "write", {}, catch_up=True)),
        (),
    )
    ops = [
        Op(0, 0, 0, "invoke", "acquire"),
        Op(1, 70 * MS, 0, "ok", "acquire"),
        Op(2, 70 * MS, 0, "invoke", "write", {BEHIND: 0.069}),
    ]
    facts = lateness(rec, ops, concurrency=1)
    assert (facts["caught_up"], facts["caught_up_max_ms"], facts["held"]) == (1, 69.0, 1)
    assert "1 holder work issued late shortened to catch up (by at most 69 ms)" in (
        lateness_line(facts)
    )
