"""checkers.mutex_lin: owner-aware mutex linearizability, a lost lease counted as a release
at its end."""

from __future__ import annotations

from test_mutex_records import (
    S,
    by_time,
    fault,
    history,
    holding,
    lease_events,
    service_grant,
    service_lease,
)

from checkers.mutex_lin import check_mutex_linearizable, with_lease_ends


def paused(next_at: float) -> tuple:  # type: ignore[type-arg]
    """1 holds (last keepalive sent 2.999 s, received 3 s, TTL 10 s) and is paused; 2's
    acquire completes at ``next_at``; 1 wakes and its release fails."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11),
        (0.2, 1, "invoke", "write", None),
        holding(2, 0.5, next_at, 2, 22, release=next_at + 1),
        fault("client-pause", 4.0, 20.0, {"processes": [1]}),
        (20.0, 1, "ok", "write", None),
        (20.1, 1, "invoke", "release", {"name": "lock"}),
        (20.2, 1, "fail", "release", None),
    )
    events = by_time(lease_events(1, 11, [0.05, 3.0], lost=20.05),
                     lease_events(2, 22, [0.6, next_at]))  # fmt: skip
    return h, events


def test_clean_handovers_are_linearizable() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=0.5), holding(2, 0.2, 0.6, 2, 22, release=1))
    r = check_mutex_linearizable(h, lease_events(1, 11, [0.05]) + lease_events(2, 22, [0.25]))
    assert r.valid is True, r.summary
    assert r.checker == "mutex-linearizability" and r.details["lease_ends"] == 0


def test_a_paused_holders_expired_lease_is_a_release_not_a_violation() -> None:
    r = check_mutex_linearizable(*paused(next_at=13.1))
    assert r.valid is True, r.summary
    assert r.details["lease_ends_by_keepalives"] == 1
    assert "counted as a release" in r.summary


def test_a_grant_before_the_lease_could_have_ended_is_not_linearizable() -> None:
    r = check_mutex_linearizable(*paused(next_at=12.0))  # lease valid until >= 12.999 s
    assert r.valid is False
    assert "Not linearizable as an owner-aware mutex" in r.summary
    assert r.details["violations"] == [r.summary] and "counterexample" in r.details


def test_the_services_log_places_the_lease_end_exactly() -> None:
    h, events = paused(next_at=11.0)
    expired = by_time(service_lease(11, 0.04, [3.0], expired=10.5),
                      service_lease(22, 0.5, [10.6], revoked=12.05),
                      service_grant(0.05, 11, 1), service_grant(10.6, 22, 2))  # fmt: skip
    r = check_mutex_linearizable(h, events, expired)
    assert r.valid is True, r.summary
    assert r.details["lease_ends_by_service"] == 1
    alive = by_time(service_lease(11, 0.04, [3.0, 8.0]), service_lease(22, 0.5, [10.6]),
                    service_grant(0.05, 11, 1), service_grant(10.6, 22, 2, forced=True))
    assert check_mutex_linearizable(h, events, alive).valid is False  # lock-ignores-lease


def test_a_release_after_the_expiry_that_still_says_ok_is_folded_in() -> None:
    """etcd's unlock deletes a key that may already be gone and answers ok."""
    h = history(holding(1, 0.0, 0.1, 1, 11, release=20.0), holding(2, 0.5, 13.1, 2, 22))
    events = lease_events(1, 11, [0.05, 3.0]) + lease_events(2, 22, [0.6, 13.0])
    ends = with_lease_ends(h, events)
    (end,) = [op for op in ends.history if op.type == "ok" and op.f == "release"
              and op.process == 1]  # fmt: skip
    assert end.value["lease_end"] and end.time == 13 * S  # the lease's latest end, not 20 s
    assert check_mutex_linearizable(h, events).valid is True


def test_without_any_lease_record_an_overlap_is_unknown_not_invalid() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11), holding(2, 0.5, 13.1, 2, 22))
    r = check_mutex_linearizable(h, [])
    assert r.valid == "unknown" and r.details["unplaced"] == 2
    assert "without any lease record" in r.summary


def test_info_acquires_and_clients_that_never_return() -> None:
    h = history(
        holding(1, 0.0, 0.1, 1, 11, release=0.5),
        (0.2, 2, "invoke", "acquire", {"name": "lock"}), (5.2, 2, "info", "acquire", None),
        (0.3, 3, "invoke", "acquire", {"name": "lock"}),  # never returns
        holding(4, 0.6, 0.7, 3, 44, release=1.0),
    )  # fmt: skip
    events = lease_events(1, 11, [0.05]) + lease_events(4, 44, [0.65])
    assert check_mutex_linearizable(h, events).valid is True


def test_several_locks_are_checked_apart() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, name="a"), holding(2, 0.0, 0.1, 2, 22, name="b"))
    events = lease_events(1, 11, [0.05], lock="a") + lease_events(2, 22, [0.05], lock="b")
    ends = with_lease_ends(h, events)
    assert {op.key for op in ends.history} == {"a", "b"}
    r = check_mutex_linearizable(h, events)
    assert r.valid is True and r.details["partitions"] == 2
