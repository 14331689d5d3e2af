"""checkers.fencing: numbers that only go up, from the clients and the service's log, and a
resource that never accepts a lower one."""

from __future__ import annotations

from test_mutex_records import (
    by_time,
    fault,
    history,
    holding,
    run_record,
    service_grant,
    service_lease,
    write,
)

from checkers import fencing
from checkers.fencing import lower_accepted


def test_increasing_tokens_and_a_fenced_resource_are_valid() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.5), holding(2, 0.2, 0.6, 2, 22))
    log = [write(0.3, 1, 1, None, True), write(0.7, 2, 2, 1, True), write(0.8, 1, 1, 2, False)]
    r = fencing.check_record(run_record(log, h, fencing=True))
    assert r.valid is True, r.summary
    assert r.details["anomalies"] == [] and r.details["grants"] == 2
    assert "every token was higher" in r.summary


def test_a_reused_token_is_a_service_bug() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.5), holding(2, 0.2, 0.6, 1, 22))
    r = fencing.check_record(run_record([], h))
    assert r.valid is False
    (a,) = r.details["anomalies"]
    assert (a["kind"], a["source"], a["earlier"]["process"], a["later"]["process"]) == (
        "reused",
        "history",
        1,
        2,
    )
    assert a["classification"]["cause"] == "service-bug"
    (text,) = r.details["violations"]
    assert text.startswith("lock: 1 grant carried a token already granted to another holder")
    assert "process 2 got token 1 at 0.610 s" not in text  # the ok time, not the release's
    assert "process 2 got token 1 at 0.600 s, after process 1 had got token 1" in text


def test_a_lower_token_after_a_completed_grant_is_caught() -> None:
    h = history(holding(1, 0.0, 0.1, 5, 11, release=0.5), holding(2, 0.6, 0.7, 3, 22))
    (a,) = fencing.check_record(run_record([], h)).details["anomalies"]
    assert a["kind"] == "lowered" and a["earlier"]["number"] == 5


def test_concurrent_grants_may_complete_out_of_order() -> None:
    """1's grant (token 1) reaches it after 2's (token 2): not an anomaly, since 1's grant
    had not completed when 2 asked."""
    h = history(holding(1, 0.0, 5.0, 1, 11), holding(2, 0.1, 0.2, 2, 22))
    assert fencing.check_record(run_record([], h)).valid is True


def test_the_same_lease_may_get_its_token_again() -> None:
    """A re-entrant acquire returns the same token to the same lease."""
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.2), holding(1, 0.3, 0.4, 1, 11))
    assert fencing.check_record(run_record([], h)).details["anomalies"] == []


def test_the_services_log_is_checked_in_its_own_order() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.5))
    service = by_time(
        service_lease(11, 0.0),
        service_lease(22, 0.0),
        service_lease(33, 0.0),
        service_grant(0.05, 11, 1),
        service_grant(0.55, 22, 2),
        service_grant(0.9, 33, 2),
    )
    r = fencing.check_record(run_record([], h, service_events=service))
    (a,) = r.details["anomalies"]
    assert (a["kind"], a["source"]) == ("reused", "service")
    assert r.details["service_grants"] == 3
    assert "1 in the service's own log" in r.summary


def test_a_counter_reset_by_a_crash_is_classified_as_such() -> None:
    h = history(
        holding(1, 0.0, 0.1, 7, 11, release=0.5),
        fault("kill", 1.0, 1.5, {"nodes": ["sim"]}),
        holding(2, 2.0, 2.1, 1, 22),
    )
    r = fencing.check_record(run_record([], h))
    (a,) = r.details["anomalies"]
    assert a["kind"] == "lowered" and a["classification"]["cause"] == "crash-lost-state"
    assert "a node lost the lock state in a crash" in r.summary


def test_the_resource_must_not_accept_a_lower_token_when_fencing_is_on() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.5), holding(2, 0.6, 0.7, 2, 22))
    log = [write(0.8, 2, 2, 1, True), write(0.9, 1, 1, 2, True)]
    on = fencing.check_record(run_record(log, h, fencing=True))
    assert on.valid is False
    assert "the protected resource accepted a token lower" in on.summary
    off = fencing.check_record(run_record(log, h, fencing=False))
    assert off.valid is True and "fencing was off" in off.summary
    assert off.details["resource"]["lower_accepted"][0]["highest_accepted"] == 2


def test_lower_accepted_is_per_resource_and_ignores_rejections() -> None:
    log = [
        write(1, 1, 5, None, True, "a"),
        write(2, 2, 3, None, True, "b"),
        write(3, 3, 4, 5, False, "a"),
        write(4, 4, 4, 5, True, "a"),
    ]
    (x,) = lower_accepted(log)
    assert x["write"]["writer"] == 4 and x["highest_accepted"] == 5


def test_a_lock_without_tokens_cannot_be_fenced() -> None:
    h = history(holding(1, 0.0, 0.1, None, 11, release=0.5))
    r = fencing.check_record(run_record([write(0.2, 1, None, None, True)], h))
    assert r.valid == "unknown" and "cannot be fenced" in r.summary
    assert r.details["resource"]["unfenced_writes"] == 1
    assert not r.applicable and r.to_dict()["applicable"] is False


def test_a_lock_with_tokens_is_judged() -> None:
    h = history(holding(1, 0.0, 0.1, 7, 11, release=0.5))
    r = fencing.check_record(run_record([write(0.2, 1, 7, None, True)], h))
    assert r.valid is True and r.applicable and "applicable" not in r.to_dict()


def test_info_and_failed_acquires_grant_nothing() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", {"name": "lock"}),
        (5.0, 1, "info", "acquire", None),
        (0.1, 2, "invoke", "acquire", {"name": "lock"}),
        (0.2, 2, "fail", "acquire", None),
        holding(3, 6.0, 6.1, 1, 33),
    )
    r = fencing.check_record(run_record([], h))
    assert r.valid is True and r.details["grants"] == 1
    assert r.details["anomalies"] == []


def test_reuse_is_caught_without_lease_ids_too() -> None:
    h = history(holding(1, 0.0, 0.1, 1, None, release=0.5), holding(2, 0.6, 0.7, 1, None))
    (a,) = fencing.check_record(run_record([], h)).details["anomalies"]
    assert a["kind"] == "reused"


def test_a_service_without_a_log_of_its_own_is_not_said_to_have_an_empty_one() -> None:
    """Issue 30: on etcd the fencing line read "91 grants seen by the clients and 0 in the
    service's own log": etcd keeps no such log."""
    from dataclasses import replace

    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.2), holding(2, 0.3, 0.4, 2, 22))
    record = run_record([], h)
    etcd = replace(record, test={**record.test, "service_log": None})
    said = fencing.check_record(etcd).summary
    assert "2 grants seen by the clients (the service keeps no log" in said, said
    assert "0 in the service's own log" not in said
    sim = replace(record, test={**record.test, "service_log": "sim/events.jsonl"})
    assert "and 0 in the service's own log" in fencing.check_record(sim).summary
