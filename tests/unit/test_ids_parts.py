"""The unique-ids workload's parts: Snowflake and its defences, the counter over a CAS,
the clients' clock through libfaketime, the client-clock nemesis and the ids checker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkers import ids
from checkers.record import RunRecord
from core.client import Invocation
from core.history import History
from core.ops import Op
from nemesis.client_skew import START, STOP, ClientClock
from workloads.errors import OpFailed
from workloads.ids import CasCounter, IdsOptions
from workloads.ids.snowflake import Snowflake, parts
from workloads.wall_clock import FAKETIME_LIB, WallClock, clock_file

MS = 1_000_000
T0 = 1_800_000_000_000  # ms


class Clock:
    """A wall clock the test moves; ``sleep`` advances it."""

    def __init__(self, ms: int = T0) -> None:
        self.ns = ms * MS
        self.slept = 0.0

    def __call__(self) -> int:
        return self.ns

    def sleep(self, s: float) -> None:
        self.slept += s
        self.ns += int(s * 1e9)


def issue(flake: Snowflake, clock: Clock, n: int) -> list[int]:
    out = []
    for _ in range(n):
        out.append(flake.next_id())
        clock.ns += MS
    return out


def test_snowflake_ids_carry_time_worker_and_a_sequence_per_millisecond() -> None:
    clock = Clock()
    flake = Snowflake(7, clock=clock)
    a, b = flake.next_id(), flake.next_id()
    assert parts(a) == (T0, 7, 0) and parts(b) == (T0, 7, 1)
    clock.ns += MS
    assert parts(flake.next_id()) == (T0 + 1, 7, 0)


def test_without_defence_a_backward_step_issues_the_same_ids_again() -> None:
    clock = Clock()
    flake = Snowflake(1, "none", clock)
    first = issue(flake, clock, 50)
    clock.ns -= 50 * MS  # back to where it started
    again = issue(flake, clock, 50)
    assert again == first


def test_refuse_fails_while_the_clock_is_behind_and_wait_waits_it_out() -> None:
    clock = Clock()
    refusing = Snowflake(1, "refuse", clock)
    issue(refusing, clock, 10)
    clock.ns -= 2000 * MS
    with pytest.raises(OpFailed, match="behind"):
        refusing.next_id()
    clock2 = Clock()
    waiting = Snowflake(1, "wait", clock2, sleep=clock2.sleep)
    first = issue(waiting, clock2, 10)
    clock2.ns -= 2000 * MS
    later = waiting.next_id()
    assert later > max(first) and 1.9 < clock2.slept < 2.1


def test_a_full_millisecond_moves_on_to_the_next() -> None:
    ticks = iter(range(10_000))

    def slow_clock() -> int:  # the 4097th id of one ms must wait for the next ms
        return T0 * MS + (MS if next(ticks) > 4200 else 0)

    flake = Snowflake(3, clock=slow_clock)
    made = [flake.next_id() for _ in range(4097)]
    assert len(set(made)) == 4097 and parts(made[-1])[0] == T0 + 1


class Register:
    """An in-memory register with CAS; ``races`` CAS calls lose to another client."""

    def __init__(self, races: int = 0) -> None:
        self.value: Any = None
        self.races = races

    def read(self, key: str) -> Any:
        return self.value

    def cas(self, key: str, old: Any, new: Any) -> None:
        if self.races:
            self.races -= 1
            self.value = (self.value or 0) + 1
            raise OpFailed("cas mismatch: someone else")
        if self.value != old:
            raise OpFailed("cas mismatch")
        self.value = new

    def close(self) -> None:
        pass


def test_the_cas_counter_retries_lost_races_and_gives_the_new_value() -> None:
    reg = Register(races=2)
    counter = CasCounter(reg)
    assert counter.next_id() == 3 and counter.next_id() == 4


needs_faketime = pytest.mark.skipif(
    not Path(FAKETIME_LIB).exists(),
    reason="libfaketime not installed (apt-get install libfaketime)",
)


@needs_faketime
def test_the_client_clock_nemesis_steps_the_clients_clock_and_proves_it(tmp_path: Path) -> None:
    class View:
        events_path = tmp_path / "events.jsonl"

    nemesis = ClientClock(-4)
    nemesis.setup(View())  # type: ignore[arg-type]
    path = clock_file(View.events_path)
    assert path is not None and path.read_text() == "+0\n"
    started = nemesis.invoke(Invocation(START))
    assert started.type == "ok", started
    assert abs(started.value["offsets"]["clients"] + 4) < 1.5
    assert path.read_text() == "-4\n"
    stopped = nemesis.invoke(Invocation(STOP))
    assert stopped.type == "ok" and abs(stopped.value["offsets"]["clients"]) < 1.5
    nemesis.invoke(Invocation(START))
    nemesis.teardown()
    assert path.read_text() == "+0\n"


def test_the_clients_clock_is_the_machines_without_a_clock_file(tmp_path: Path) -> None:
    import time

    clock = WallClock(clock_file(tmp_path / "events.jsonl"))
    assert not clock.faked and abs(clock() - time.time_ns()) < 1e9


def op(i: int, process: Any, type_: str, f: str, t: float, value: Any = None) -> Op:
    return Op(index=i, time=int(t * 1e9), process=process, type=type_, f=f, value=value)


def record(*ops: Op) -> RunRecord:
    return RunRecord(History(list(ops)), test={"options": {}})


def generate(i: int, process: int, t: float, value: Any, type_: str = "ok") -> list[Op]:
    return [
        op(2 * i, process, "invoke", "generate", t),
        op(2 * i + 1, process, type_, "generate", t + 0.01, value),
    ]


def test_the_checker_finds_a_duplicate_and_names_both_issuers() -> None:
    r = ids.check_record(
        record(*generate(0, 0, 1, 5), *generate(1, 1, 2, 6), *generate(2, 1, 3, 5))
    )
    assert r.valid is False
    d = r.details["duplicates"][0]
    assert d["id"] == 5 and [x["process"] for x in d["issuers"]] == [0, 1]
    assert "process 0" in r.summary and "process 1" in r.summary
    assert r.details["not_increasing"] == 1  # process 1 got 5 after 6


def test_the_checker_counts_out_of_order_and_gaps_and_unknown_outcomes_honestly() -> None:
    r = ids.check_record(
        record(
            *generate(0, 0, 1, 10),
            *generate(1, 1, 2, 4),  # below 10, which was out before it began
            *generate(2, 2, 3, None, "info"),
            *generate(3, 0, 4, 12),
        )
    )
    assert r.valid is True, r.summary
    assert r.details["out_of_order"] == 1 and r.details["out_of_order_max_below"] == 6
    assert r.details["gaps"]["missing"] == 6  # 5-9 and 11
    assert r.details["unknown_outcome"] == 1 and "unknown outcome" in r.summary


def test_a_run_that_handed_out_no_id_is_unknown() -> None:
    r = ids.check_record(record(*generate(0, 0, 1, None, "info"), *generate(1, 1, 1, None, "fail")))
    assert r.valid == "unknown" and "tested nothing" in r.summary


def test_leaf_segments_hand_out_their_range_and_take_the_next_at_the_prefetch_point() -> None:
    from clusters.postgres.ids import PgSegments

    taken: list[tuple[int, int]] = []
    seg = PgSegments.__new__(PgSegments)
    seg.size, seg.prefetch, seg.ranges = 10, 0.1, []

    def take() -> tuple[int, int]:
        start = 1 + 10 * len(taken)
        taken.append((start, start + 10))
        return taken[-1]

    seg._take = take  # type: ignore[method-assign]
    first = [seg.next_id() for _ in range(2)]
    assert first == [1, 2] and len(taken) == 2  # the second range taken at 10 % use
    rest = [seg.next_id() for _ in range(18)]
    assert first + rest == list(range(1, 21)) and len(taken) == 3


def test_the_report_draws_the_ids_against_time_with_every_duplicate_ringed() -> None:
    from workloads.ids.report import section
    from workloads.section import RunView

    rec = record(*generate(0, 0, 1, 5), *generate(1, 1, 2, 6), *generate(2, 1, 3, 5))
    results = {"checkers": {"ids": ids.check_record(rec).to_dict()}}
    html = section(RunView(rec, results, []))
    assert "<svg" in html and html.count('class="duplicate"') == 2
    assert "Duplicates (1 of 1 shown)" in html
    assert section(RunView(rec, {"checkers": {}}, [])) == ""
    assert section(RunView(rec, results, None)) == "", "a malformed history: no time line"


def test_the_target_decides_its_first_generator_and_refuses_one_it_lacks() -> None:
    from core.option_checks import OptionError
    from core.options import RunOptions
    from harness.validate import check_run

    opts, _ = check_run(RunOptions.of(workload="unique-ids", target="sim"))
    assert (
        opts.record(IdsOptions).generator == "counter"
        and opts.to_dict()["id_generator"] == "counter"
    )
    with pytest.raises(OptionError, match="sim has no id generator 'incr'; choose from counter"):
        check_run(RunOptions.of(workload="unique-ids", target="sim", id_generator="incr"))
    with pytest.raises(OptionError, match="--snowflake-defence 'maybe'"):
        check_run(RunOptions.of(workload="unique-ids", target="sim", snowflake_defence="maybe"))


def test_a_duplicate_is_blamed_on_the_step_back_not_the_window() -> None:
    """Issue 30: Snowflake under ``client-clock --client-clock-delta 5``: each duplicate
    pair exactly 5 s apart, made when the fault stepped the clock back at its stop, was
    said to be made "during the clients' wall clock stepped by +5 s"; and the console
    said "25 more violations" (the named ones, capped) for 21,537 duplicates."""
    from harness.analysis import console_line

    clock = {"offsets": {"clients": 5.0}}
    ops = [
        op(0, "nemesis", "invoke", "start-client-clock", 1.0),
        op(1, "nemesis", "ok", "start-client-clock", 1.01, clock),
        *[o for n in range(30) for o in generate(1 + n, 0, 2 + n * 0.01, 100 + n)],
        op(70, "nemesis", "invoke", "stop-client-clock", 6.0),
        *[o for n in range(30) for o in generate(36 + n, 1, 6.005 + n * 0.011, 100 + n)],
        op(140, "nemesis", "ok", "stop-client-clock", 6.5, {}),
    ]
    from nemesis.fault_registry import facts_of

    test = {"options": {"nemesis": ["client-clock"]}, "faults": facts_of(["client-clock"])}
    r = ids.check_record(RunRecord(History(sorted(ops, key=lambda o: o.time)), test=test))
    assert r.valid is False and r.details["duplicate_ids"] == 30
    assert "after the client-clock fault's step of the clients' clock back 5 s at its stop" in (
        r.summary
    ), r.summary
    assert "during" not in r.summary.split("Not increasing")[0]
    line = console_line(r.to_dict())
    assert f"({r.details['violations_total'] - 1} more violations" in line, line
