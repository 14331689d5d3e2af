"""The timeline of a history file: lanes per key (the counterexample's first), and files
that record only the order of events drawn one event per tick."""

from __future__ import annotations

from typing import Any

from checkers import linearizability
from core.history import History
from core.ops import Op
from harness.report._file_timeline import TICK_NS, file_timeline, in_ticks, lanes_by_key


def _ops(rows: list[tuple[Any, str, str, Any, Any]], timed: bool = False) -> History:
    """(process, type, f, value, key) rows as a history; times are positions unless
    ``timed`` (then 1 ms apart)."""
    return History(
        Op(
            index=i,
            time=(i + 1) * 1_000_000 if timed else i,
            process=p,
            type=t,
            f=f,
            value=v,
            key=k,
        )
        for i, (p, t, f, v, k) in enumerate(rows)
    )


def _results(history: History, model: str) -> dict[str, Any]:
    r = linearizability.check(history, model)
    return {"valid": r.valid, "ops": len(history), "checkers": {r.checker: r.to_dict()}}


# Key "b": p1 reads 0 after p0 wrote 1 (not linearizable); key "a" is fine; p2 ended info
# on "a" and came back as p5.
ROWS: list[tuple[Any, str, str, Any, Any]] = [
    (0, "invoke", "write", 1, "a"),
    (0, "ok", "write", 1, "a"),
    (2, "invoke", "write", 2, "a"),
    (2, "info", "write", 2, "a"),
    (0, "invoke", "write", 1, "b"),
    (0, "ok", "write", 1, "b"),
    (1, "invoke", "read", None, "b"),
    (1, "ok", "read", 0, "b"),
    (5, "invoke", "read", None, "a"),
    (5, "ok", "read", 2, "a"),
]


def test_a_file_of_several_keys_gets_lanes_per_key_its_counterexample_first() -> None:
    history = _ops(ROWS)
    timeline = file_timeline(history, _results(history, "cas-register"))
    labels = [lane["label"] for lane in timeline["lanes"]]
    assert labels == [
        "faults",
        "key b · p0",
        "key b · p1",
        "key a · p0",
        "key a · p2",
        "key a · p5",
    ]
    lanes = timeline["ops"]["lane"]
    assert [labels[lane] for lane in lanes] == [
        "key a · p0",
        "key a · p2",
        "key b · p0",
        "key b · p1",
        "key a · p5",
    ]


def test_an_order_only_file_is_drawn_one_event_per_tick() -> None:
    history = _ops(ROWS)
    timeline = file_timeline(history, _results(history, "cas-register"))
    assert timeline["unit"] == "event"
    assert timeline["ops"]["s"] == [0, 2, 4, 6, 8] and timeline["ops"]["e"] == [1, 3, 5, 7, 9]
    lin = timeline["lin"]["lins"][0]
    assert lin["at"] == [4]  # p0's write 1 on key b, at its invocation (event 4)
    culprit = timeline["culprit"]
    assert timeline["ops"]["x"][culprit] == 6  # p1's read
    assert timeline["marks"][0]["s"] == 4 and timeline["marks"][0]["e"] == 7  # the window


def test_a_timed_file_keeps_its_clock() -> None:
    history = _ops(ROWS, timed=True)
    timeline = file_timeline(history, _results(history, "cas-register"))
    assert timeline["unit"] == "us"
    assert timeline["ops"]["s"][:2] == [1000, 3000]  # microseconds of the file's ns


def test_in_ticks_scales_the_times_of_a_result_and_nothing_else() -> None:
    cx = {
        "time_unit": "event",
        "op": {"index": 6, "invoke_time": 6, "complete_time": None, "value": 3},
        "window": {"start": 4, "end": 7, "ops": [{"invoke_time": 4, "complete_time": 5}]},
        "linearizations": [{"length": 1, "steps": {"at": [4], "index": [4], "state": [0]}}],
    }
    got = in_ticks(cx)
    assert got["time_unit"] == "ns"
    assert got["op"] == {"index": 6, "invoke_time": 6 * TICK_NS, "complete_time": None, "value": 3}
    assert got["window"]["start"] == 4 * TICK_NS and got["window"]["end"] == 7 * TICK_NS
    assert got["window"]["ops"][0] == {"invoke_time": 4 * TICK_NS, "complete_time": 5 * TICK_NS}
    steps = got["linearizations"][0]["steps"]
    assert steps == {"at": [4 * TICK_NS], "index": [4], "state": [0]}
    assert cx["window"]["start"] == 4  # the result itself is left as it was


def test_one_key_or_none_keeps_the_lanes_of_a_run() -> None:
    timeline: dict[str, Any] = {
        "ops": {"k": [0, 0], "lane": [1, 2]},
        "keys": ["x"],
        "lanes": [{"label": "faults"}, {"label": "p0"}, {"label": "p1"}],
    }
    lanes_by_key(timeline, "x")
    assert [lane["label"] for lane in timeline["lanes"]] == ["faults", "p0", "p1"]
