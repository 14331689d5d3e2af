"""checkers.stats: latency quantiles, throughput and availability inside and outside faults."""

from __future__ import annotations

from test_mutex_records import S, fault, history, run_record

from checkers import stats
from checkers.stats import quantile, throughput


def ops(process: int, f: str, spans: list[tuple[float, float, str]]) -> list:  # type: ignore[type-arg]
    return [
        e
        for t0, t1, ty in spans
        for e in ((t0, process, "invoke", f, None), (t1, process, ty, f, None))
    ]


def test_nearest_rank_quantiles() -> None:
    xs = list(range(1, 101))
    assert (quantile(xs, 0.5), quantile(xs, 0.9), quantile(xs, 0.99), quantile(xs, 1.0)) == (
        50,
        90,
        99,
        100,
    )
    assert quantile([7], 0.5) == 7


def test_latency_per_f_and_outcome_with_info_and_open_ops() -> None:
    h = history(
        ops(1, "read", [(0.0, 0.1, "ok"), (1.0, 1.3, "ok"), (2.0, 2.2, "fail")]),
        ops(2, "write", [(0.0, 0.5, "ok")]),
        (3.0, 2, "invoke", "write", None),
        (13.0, 2, "info", "write", None),  # a timeout
        (4.0, 3, "invoke", "write", None),  # a client that never returns
    )
    lat = stats.check_record(run_record([], h)).details["latency"]
    assert lat["read"]["ok"] == {"count": 2, "p50": 0.1, "p90": 0.3, "p99": 0.3, "max": 0.3}
    assert lat["read"]["fail"]["count"] == 1 and lat["read"]["fail"]["max"] == 0.2
    assert lat["write"]["info"]["p50"] == 10.0
    assert lat["write"]["open"] == {"count": 1}


def test_throughput_per_second_bucket() -> None:
    h = history(ops(1, "read", [(0.0, 0.2, "ok"), (0.3, 0.5, "fail"), (0.6, 2.5, "ok")]))
    rows = throughput(h.client_ops().pairs())
    assert rows == [
        {"t": 0.0, "ok": 1, "fail": 1, "info": 0, "ops_per_s": 2.0},
        {"t": 1.0, "ok": 0, "fail": 0, "info": 0, "ops_per_s": 0.0},
        {"t": 2.0, "ok": 1, "fail": 0, "info": 0, "ops_per_s": 1.0},
    ]


def test_availability_inside_and_outside_each_fault_window() -> None:
    h = history(
        ops(
            1,
            "read",
            [
                (0.0, 0.1, "ok"),
                (1.0, 1.1, "ok"),
                (5.0, 5.1, "fail"),
                (5.2, 5.3, "ok"),
                (9.0, 9.1, "ok"),
            ],
        ),
        fault("pause", 4.0, 6.0, {"nodes": ["n1"]}),
    )
    r = stats.check_record(run_record([], h))
    assert r.valid is True, r.summary
    (w,) = r.details["availability"]["windows"]
    assert (w["kind"], w["ok_ops"], w["completed_ops"], w["availability"]) == ("pause", 1, 2, 0.5)
    out = r.details["availability"]["outside"]
    assert (out["ok_ops"], out["completed_ops"], out["availability"]) == (3, 3, 1.0)
    assert "pause 4.0 s to 6.0 s: 50% available" in r.summary


def test_a_fault_during_which_nothing_succeeded_proves_nothing() -> None:
    h = history(
        ops(1, "read", [(0.0, 0.1, "ok"), (4.5, 5.0, "fail"), (5.1, 5.5, "info")]),
        ops(2, "read", [(9.0, 9.1, "ok")]),
        fault("partition", 4.0, 6.0, {"grudge": {"n1": ["n2"]}}),
    )
    r = stats.check_record(run_record([], h))
    assert r.valid == "unknown"
    assert "proves nothing about that fault" in r.summary
    assert r.details["unproven_faults"] == [
        {"kind": "partition", "start": int(4.001 * S), "end": int(6.001 * S)}  # as applied
    ]
    accepted = stats.check_record(run_record([], h, accept_unavailable=True))
    assert accepted.valid is True and "which the test accepts" in accepted.summary


def test_a_failed_fault_is_not_a_window() -> None:
    h = history(
        ops(1, "read", [(0.0, 0.1, "ok"), (4.5, 5.0, "fail")]),
        (4.0, "nemesis", "invoke", "start-kill", {"nodes": ["n1"]}),
        (4.1, "nemesis", "fail", "start-kill", None),
    )
    r = stats.check_record(run_record([], h))
    assert r.valid is True and r.details["availability"]["windows"] == []


def test_no_completed_operation_proves_nothing() -> None:
    h = history((0.0, 1, "invoke", "acquire", None))
    r = stats.check_record(run_record([], h))
    assert r.valid == "unknown" and "proves nothing" in r.summary
    assert r.details["throughput"] == []


def test_a_crash_is_proven_by_the_restarted_service_answering() -> None:
    """The one-node sim killed: nothing can succeed until the restart (seed-32 kill run,
    cas-register, once clients back off), and what a crash tests comes after it."""
    down = ops(1, "read", [(0.0, 0.1, "ok"), (4.1, 4.2, "fail"), (5.0, 5.1, "fail")])
    back = ops(2, "read", [(6.5, 6.6, "ok")])
    h = history(down, back, fault("kill", 4.0, 6.0, {"nodes": ["sim"]}))
    r = stats.check_record(run_record([], h))
    assert r.valid is True and r.details["unproven_faults"] == [], r.summary
    never_back = history(down, fault("kill", 4.0, 6.0, {"nodes": ["sim"]}))
    assert stats.check_record(run_record([], never_back)).valid == "unknown"
    paused = history(down, back, fault("pause", 4.0, 6.0, {"nodes": ["sim"]}))
    assert (
        stats.check_record(run_record([], paused)).valid == "unknown"
    )  # only a crash is proven afterwards


def test_a_silent_window_of_a_fault_another_window_tested_is_said_not_unknown() -> None:
    """The last partition of an etcd watch run took effect as the workload ended: no op
    was left to succeed in it, while the first partition was tested (CI saw the run
    called unknown for it)."""
    h = history(
        ops(1, "read", [(0.0, 0.1, "ok"), (4.5, 5.0, "ok"), (8.9, 12.0, "info")]),
        fault("partition", 4.0, 6.0, {"grudge": {"n1": ["n2"]}}),
        fault("partition", 10.0, 11.0, {"grudge": {"n2": ["n1"]}}),
    )
    r = stats.check_record(run_record([], h))
    assert r.valid is True, r.summary
    assert r.details["unproven_faults"] == []
    assert [w["start"] for w in r.details["silent_windows"]] == [int(10.001 * S)]
    assert "No operation succeeded during 1 fault window (partition from 10.001 s)" in r.summary
    assert "other windows of the same fault tested it" in r.summary
    only_silent = history(
        ops(1, "read", [(0.0, 0.1, "ok"), (8.9, 12.0, "info")]),
        fault("partition", 10.0, 11.0, {"grudge": {"n2": ["n1"]}}),
        fault("kill", 4.0, 6.0, {"nodes": ["n1"]}),
    )
    r = stats.check_record(run_record([], only_silent))
    assert r.valid == "unknown" and "proves nothing about those faults" in r.summary, r.summary
