"""checkers.mutex on constructed histories, resource logs and client events."""

from __future__ import annotations

from test_mutex_records import (
    S,
    by_time,
    fault,
    history,
    holding,
    lease_events,
    run_record,
    service_grant,
    service_lease,
    write,
)

from checkers import election, mutex
from core.history import History


def paused_holder(fencing: bool) -> tuple[list[dict], History, list[dict]]:
    """The domain's timeline: 1 holds (token 1), frozen 12..26 s; its lease (last ack at
    12 s) expires at 22 s; 2 acquires (token 2) at 22.1 s and writes at 24 s; 1 wakes and
    writes at 26 s."""
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11}),
        (0.2, 1, "invoke", "write", "v1"),
        (1.0, 2, "invoke", "acquire", None),
        (22.1, 2, "ok", "acquire", {"token": 2, "lease": 22}),
        (22.2, 2, "invoke", "write", "v2"),
        (24.0, 2, "ok", "write", None),
        (24.1, 2, "invoke", "release", None),
        (24.2, 2, "ok", "release", None),
        (26.0, 1, "ok" if not fencing else "fail", "write", None),
        (26.1, 1, "invoke", "release", None),
        (26.2, 1, "fail", "release", None),
    )
    log = [write(23.9, 2, 2, None, True), write(26.0, 1, 1, 2, not fencing)]
    events = lease_events(1, 11, [0.05, 3, 6, 9, 12], lost=26.05)
    events += lease_events(2, 22, [0.9, 3.9, 6.9, 9.9, 12.9, 15.9, 18.9, 21.9])
    return log, h, events


def test_stale_write_rejected_is_valid_and_measured() -> None:
    r = mutex.check_record(run_record(*paused_holder(fencing=True)))
    assert r.valid is True, r.summary
    assert len(r.details["stale_rejected"]) == 1 and not r.details["stale_accepted"]
    assert "fencing stopped" in r.details["stale_rejected"][0]["explanation"]
    (o,) = r.details["overlaps"]
    assert o["kind"] == "lease-expired" and o["first"]["process"] == 1
    (h,) = r.details["handovers"]
    assert h["lease_expiry"] == 22 * S
    assert h["danger_window_s"] == 4.0  # the write at 26 s minus the expiry at 22 s
    assert abs(h["handover_delay_s"] - 0.1) < 1e-9
    assert h["next_process"] == 2 and h["ended_by"] == "lease-lost"


def test_stale_write_accepted_is_invalid_with_a_plain_explanation() -> None:
    r = mutex.check_record(run_record(*paused_holder(fencing=False)))
    assert r.valid is False
    (s,) = r.details["stale_accepted"]
    assert s["write"]["writer"] == 1 and s["lease_expiry"] == 22 * S
    text = s["explanation"]
    assert "token 1" in text and "accepted" in text
    assert "4.000 s later" in text  # the danger window, in words
    # The summary tells it once, in the stale holder's paragraph, with the numbers.
    (g,) = r.details["overlap_groups"]
    assert g["summary"] in r.summary and g["summary"] in r.details["violations"]
    assert "danger window 4.000 s" in g["summary"] and "Handover delay 0.100 s" in g["summary"]
    assert g["classification"]["cause"] == "unexplained"  # no fault recorded in this history


def test_service_granting_over_a_live_lease_is_an_overlap_violation() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11}),
        (0.5, 2, "invoke", "acquire", None),
        (2.0, 2, "ok", "acquire", {"token": 2, "lease": 22}),  # 1's lease renewed at 1.5 s
        (3.0, 1, "invoke", "release", None),
        (3.1, 1, "ok", "release", None),
        (3.2, 2, "invoke", "release", None),
        (3.3, 2, "ok", "release", None),
    )
    events = lease_events(1, 11, [0.05, 1.5]) + lease_events(2, 22, [0.6])
    r = mutex.check_record(run_record([], h, events))
    assert r.valid is False
    (o,) = r.details["overlaps"]
    assert o["kind"] == "lease-valid"
    assert (o["first"]["process"], o["later"]["process"]) == (1, 2)
    assert "Two holders at once" in r.summary and "still valid" in r.summary
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == "service-bug"
    assert "the harness had not abandoned it" in g["classification"]["evidence"]


def test_handover_after_release_is_clean() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11}),
        (0.5, 2, "invoke", "acquire", None),
        (1.0, 1, "invoke", "write", "v1"),
        (1.2, 1, "ok", "write", None),
        (1.3, 1, "invoke", "release", None),
        (1.4, 1, "ok", "release", None),
        (1.45, 2, "ok", "acquire", {"token": 2, "lease": 22}),
        (1.5, 2, "invoke", "write", "v2"),
        (1.7, 2, "ok", "write", None),
    )
    log = [write(1.1, 1, 1, None, True), write(1.6, 2, 2, 1, True)]
    events = lease_events(1, 11, [0.05]) + lease_events(2, 22, [0.6])
    r = mutex.check_record(run_record(log, h, events))
    assert r.valid is True, r.summary
    assert r.details["overlaps"] == [] and r.details["handovers"] == []


def test_info_acquire_is_a_possible_holder_only() -> None:
    """An acquire that timed out may have been granted: it is no proof of an overlap."""
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11}),
        (0.2, 2, "invoke", "acquire", None),
        (5.2, 2, "info", "acquire", None),
        (6.0, 1, "invoke", "write", "v1"),
        (6.1, 1, "info", "write", None),  # unknown outcome: the resource log decides
    )
    log = [write(6.05, 1, 1, None, True)]
    r = mutex.check_record(run_record(log, h, lease_events(1, 11, [0.05, 3.0])))
    assert r.valid is True, r.summary
    assert r.details["holdings"] == 1 and r.details["overlaps"] == []


def test_client_that_never_returns() -> None:
    """Holder 1's write never completes (its worker died); its lease lapses and 2 takes
    over. Its write did reach the resource late: with fencing it was rejected."""
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11}),
        (0.2, 1, "invoke", "write", "v1"),
        (1.0, 2, "invoke", "acquire", None),
        (13.0, 2, "ok", "acquire", {"token": 2, "lease": 22}),
        (13.1, 2, "invoke", "write", "v2"),
        (13.3, 2, "ok", "write", None),
    )
    log = [write(13.2, 2, 2, None, True), write(14.0, 1, 1, 2, False)]
    events = lease_events(1, 11, [0.05, 3.0]) + lease_events(2, 22, [0.9, 3.9, 6.9, 9.9, 12.9])
    r = mutex.check_record(run_record(log, h, events))
    assert r.valid is True, r.summary
    (o,) = r.details["overlaps"]
    assert o["kind"] == "lease-expired" and o["first"]["ended_by"] == "open"
    (ho,) = r.details["handovers"]
    assert ho["ended_by"] == "open" and ho["lease_expiry"] == 13 * S
    assert ho["danger_window_s"] == 1.0 and ho["handover_delay_s"] == 0.0


def test_unfenced_stale_write_is_judged_from_the_history() -> None:
    """A tokenless (Redis-style) write that lands after a later holder acquired."""
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"lease": 11}),
        (0.2, 1, "invoke", "write", "v1"),
        (1.0, 2, "invoke", "acquire", None),
        (11.0, 2, "ok", "acquire", {"lease": 22}),
        (11.5, 2, "invoke", "write", "v2"),
        (11.6, 2, "ok", "write", None),
        (12.0, 1, "ok", "write", None),
    )
    log = [write(11.55, 2, None, None, True), write(11.9, 1, None, None, True)]
    r = mutex.check_record(
        run_record(log, h, lease_events(1, 11, [0.05]) + lease_events(2, 22, [1.0]))
    )
    assert r.valid is False
    (s,) = r.details["stale_accepted"]
    assert s["kind"] == "unfenced" and s["write"]["writer"] == 1


def test_overlap_without_lease_events_is_unknown() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", None),
        (0.1, 1, "ok", "acquire", {"token": 1}),
        (0.2, 2, "invoke", "acquire", None),
        (0.3, 2, "ok", "acquire", {"token": 2}),
    )
    r = mutex.check_record(run_record([], h, []))
    assert r.valid == "unknown"
    assert r.details["overlaps"][0]["kind"] == "lease-unknown"


def test_nothing_held_proves_nothing() -> None:
    h = history((0.0, 1, "invoke", "acquire", None), (5.0, 1, "fail", "acquire", None))
    assert mutex.check_record(run_record([], h, [])).valid == "unknown"


def test_election_ops_count_as_holdings() -> None:
    h = history(
        (0.0, 1, "invoke", "campaign", 1),
        (0.1, 1, "ok", "campaign", {"epoch": 3, "lease": 11}),
        (0.2, 1, "invoke", "resign", None),
        (0.3, 1, "ok", "resign", None),
    )
    r = election.check_record(
        run_record([write(0.15, 1, 3, None, True)], h, lease_events(1, 11, [0.05]))
    )
    assert r.valid is True and r.details["holdings"] == 1
    assert mutex.check_record(run_record([], h)).details["holdings"] == 0  # a lock's only


def test_holders_of_different_locks_do_not_overlap() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", {"name": "a"}),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11, "name": "a"}),
        (0.2, 2, "invoke", "acquire", {"name": "b"}),
        (0.3, 2, "ok", "acquire", {"token": 2, "lease": 22, "name": "b"}),
    )
    events = lease_events(1, 11, [0.05]) + lease_events(2, 22, [0.25])
    r = mutex.check_record(run_record([], h, events))
    assert r.valid is True and r.details["overlaps"] == []


# --- grouping, the service's own log, and causes ------------------------------------------


def stale_holder_and_successors(fencing: bool) -> tuple[list[dict], History, list[dict]]:
    """Process 1 holds lock (token 1) and is paused 2..20 s; its lease (TTL 10, last ack at
    1 s) expires at 11 s; processes 2 and 3 then hold it three times (tokens 2..4), each
    releasing; 1 wakes at 20 s and writes with token 1."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11),
        (0.2, 1, "invoke", "write", "v1"),
        holding(2, 0.5, 11.1, 2, 22, release=12.0),
        holding(3, 0.6, 12.1, 3, 33, release=13.0),
        holding(2, 12.2, 13.1, 4, 44, release=14.0),
        fault("client-pause", 2.0, 20.0, {"processes": [1]}),
        (20.01, 1, "ok" if not fencing else "fail", "write", None),
    )
    log = [
        write(11.5, 2, 2, None, True),
        write(12.5, 3, 3, 2, True),
        write(13.5, 2, 4, 3, True),
        write(20.005, 1, 1, 4, not fencing),
    ]
    events = by_time(
        lease_events(1, 11, [0.05, 1.0], lost=20.02),
        lease_events(2, 22, [0.6]),
        lease_events(3, 33, [0.7]),
        lease_events(2, 44, [12.3]),
    )
    return log, h, events


def test_overlaps_of_one_stale_holder_are_one_entry_with_durations() -> None:
    r = mutex.check_record(run_record(*stale_holder_and_successors(fencing=True)))
    assert r.valid is True, r.summary
    assert len(r.details["overlaps"]) == 3  # every pair is still listed, with its duration
    assert all(o["kind"] == "lease-expired" for o in r.details["overlaps"])
    assert [o["overlap_s"] for o in r.details["overlaps"]] == [0.9, 0.9, 0.9]
    # The late write landed after every later holder had released: no overlap at the
    # resource, though it is still a stale write (a lower token).
    assert all(o["at_resource"] == [] for o in r.details["overlaps"])
    (g,) = r.details["overlap_groups"]
    assert (g["process"], g["later_count"], g["kind"]) == (1, 3, "lease-expired")
    assert g["taken_over_at"] == 11.1 * S
    assert g["believed_after_takeover_s"] == 8.92  # 11.1 s to the noticed loss at 20.02 s
    assert g["both_believed_s"] == 2.7
    assert "while 3 later holdings happened (processes 2 and 3, tokens 2-4)" in g["summary"]
    assert g["classification"]["cause"] == "lease-expired-while-paused"
    assert g["classification"]["expected"] is True
    assert "rejected by fencing" in g["summary"] and not g["violation"]
    # One paragraph for the stale holder, not one line per overlapping pair.
    assert r.summary.count("believed it held") == 1


def test_unfenced_stale_holder_paragraph_names_cause_fix_and_numbers() -> None:
    r = mutex.check_record(run_record(*stale_holder_and_successors(fencing=False)))
    assert r.valid is False
    (text,) = r.details["violations"]
    assert text.startswith("Process 1 believed it held lock (token 1) from 0.100 s")
    assert "lease expired while its holder was paused" in text
    assert "client process 1 paused (SIGSTOP" in text
    assert "Handover delay 0.100 s" in text and "danger window 9.005 s" in text
    assert "Fix: fencing" in text


def test_the_services_own_log_gives_exact_grants_and_expiry() -> None:
    log, h, events = stale_holder_and_successors(fencing=True)
    service = by_time(
        service_lease(11, 0.04, [1.0], expired=11.0),  # renewed at 1 s: due at 11 s
        service_lease(22, 0.59),
        service_grant(0.05, 11, 1),
        service_grant(11.01, 22, 2),
    )
    r = mutex.check_record(run_record(log, h, events, service))
    assert r.valid is True, r.summary
    (ho,) = r.details["handovers"]
    assert (ho["lease_expiry"], ho["lease_expiry_source"]) == (11 * S, "service")
    assert ho["next_acquired"] == 11.01 * S  # the grant, not the client's ok at 11.1 s
    assert abs(ho["handover_delay_s"] - 0.01) < 1e-9
    assert "expired at 11.000 s by the service's own log" in r.summary


def test_a_service_that_expires_a_lease_early_is_caught_by_the_clients_acks() -> None:
    """The service logged an expiry at 10.95 s, but it had acknowledged a renewal sent at
    0.999 s with a TTL of 10 s: by its own acknowledgement the lease was valid to 10.999 s."""
    log, h, events = stale_holder_and_successors(fencing=True)
    service = by_time(service_lease(11, 0.04, [1.0], expired=10.95), service_grant(10.96, 22, 2))
    r = mutex.check_record(run_record(log, h, events, service))
    assert r.valid is False
    (g,) = r.details["overlap_groups"]
    assert g["kind"] == "lease-valid"
    # The nemesis paused the holder, but the lease was still valid: not the pause's doing.
    assert g["classification"]["cause"] == "service-bug"


def test_service_log_shows_a_grant_over_a_live_lease() -> None:
    """No client renewal proves the lease alive at 5 s, but the service's log does."""
    h = history(holding(1, 0.0, 0.1, 1, 11), holding(2, 0.2, 5.1, 2, 22))
    events = lease_events(1, 11, [0.05]) + lease_events(2, 22, [0.25])
    service = by_time(
        service_lease(11, 0.04, [4.0]),
        service_lease(22, 0.2),
        service_grant(0.05, 11, 1),
        service_grant(5.0, 22, 2, forced=True),
    )
    r = mutex.check_record(run_record([], h, events, service))
    assert r.valid is False
    (g,) = r.details["overlap_groups"]
    assert g["kind"] == "lease-valid" and g["classification"]["cause"] == "service-bug"
    assert "renewed until 14.000 s" in g["summary"]
    assert g["summary"].startswith("Two holders at once: process 1 believed it held")


def test_an_equal_token_from_a_superseded_holder_is_stale_and_blames_the_token() -> None:
    """Token reuse: 1 and 2 both got token 1. The resource accepts 1's late write (equal is
    not lower): fencing could not tell them apart, which is the service's fault."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11),
        holding(2, 0.5, 11.1, 1, 22),
        fault("client-pause", 2.0, 20.0, {"processes": [1]}),
    )
    log = [write(11.5, 2, 1, None, True), write(20.0, 1, 1, 1, True)]
    events = lease_events(1, 11, [0.05, 1.0]) + lease_events(2, 22, [0.6])
    r = mutex.check_record(run_record(log, h, events))
    assert r.valid is False
    (s,) = r.details["stale_accepted"]
    assert s["kind"] == "superseded"
    assert s["classification"]["cause"] == "service-bug"
    assert "reused or lowered a fencing token" in s["classification"]["label"]
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == "lease-expired-while-paused"
    assert g["accepted_because"]["cause"] == "service-bug"
    assert "Why it got through" in g["summary"] and "every grant must carry" in g["summary"]


def test_a_write_that_never_returned_still_counts_at_the_resource() -> None:
    """Process 1's write never completes (its worker was abandoned); the resource log is
    what tells that it arrived, late."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11), (0.2, 1, "invoke", "write", "v1"), holding(2, 0.5, 11.1, 2, 22)
    )
    log = [write(11.2, 2, 2, None, True), write(15.0, 1, 1, 2, False)]
    r = mutex.check_record(
        run_record(log, h, lease_events(1, 11, [0.05, 1.0]) + lease_events(2, 22, [0.6]))
    )
    assert r.valid is True, r.summary
    (g,) = r.details["overlap_groups"]
    assert g["holding"]["ended_by"] == "open" and g["writes_after_takeover"][0]["writer"] == 1
    (ho,) = r.details["handovers"]
    assert ho["danger_window_s"] == 4.0 and ho["last_write_arrival"] == 15 * S
    # At the resource too, the critical sections overlapped: 1's write landed in 2's.
    (pair,) = r.details["overlaps"]
    assert pair["at_resource"] == [{"time": 15 * S, "token": 1, "accepted": False}]
