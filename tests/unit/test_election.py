"""checkers.election: one leader per epoch, epochs that go up, how long two processes
believed they led, and whether a deposed leader's writes got through."""

from __future__ import annotations

from functools import partial

from test_mutex_records import (
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

from checkers import election
from core.history import History

term = partial(holding, take="campaign", give="resign", name="e")


def elect_write(t: float, writer: int, epoch: int, highest: int | None, accepted: bool) -> dict:
    return write(t, writer, epoch, highest, accepted, resource="e")


def test_orderly_leaders_are_valid() -> None:
    h = history(term(1, 0.0, 0.1, 1, 11, release=1.0), term(2, 0.5, 1.02, 2, 22, release=2.0))
    log = [elect_write(0.5, 1, 1, None, True), elect_write(1.5, 2, 2, 1, True)]
    events = lease_events(1, 11, [0.05], lock="e") + lease_events(2, 22, [0.6], lock="e")
    r = election.check_record(run_record(log, h, events))
    assert r.valid is True, r.summary
    assert r.checker == "election" and r.details["epoch_anomalies"] == []
    assert "2 leaderships" in r.summary and "one leader per epoch" in r.summary


def deposed_leader(epoch2: int, accepted: bool) -> tuple[list[dict], History, list[dict]]:
    """Leader 1 (epoch 1) is paused 2..20 s; its lease expires at 11 s; 2 is elected with
    ``epoch2`` at 11.1 s; 1 wakes and writes at 20 s."""
    h = history(
        term(1, 0.0, 0.1, 1, 11),
        term(2, 0.5, 11.1, epoch2, 22, release=12.0),
        fault("client-pause", 2.0, 20.0, {"processes": [1]}),
    )
    log = [elect_write(11.5, 2, epoch2, 1, True), elect_write(20.0, 1, 1, epoch2, accepted)]
    events = by_time(
        lease_events(1, 11, [0.05, 1.0], lost=20.1, lock="e"), lease_events(2, 22, [0.6], lock="e")
    )
    return log, h, events


def test_deposed_leader_rejected_by_fencing_is_valid_and_measured() -> None:
    r = election.check_record(run_record(*deposed_leader(epoch2=2, accepted=False)))
    assert r.valid is True, r.summary
    assert r.details["two_leaders_s"] == {"e": 0.9}  # 2 led 11.1..12.0 while 1 believed it led
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == "lease-expired-while-paused"
    assert "Process 1 believed it led e (epoch 1)" in g["summary"]
    (ho,) = r.details["handovers"]
    assert ho["danger_window_s"] == 9.0 and abs(ho["handover_delay_s"] - 0.1) < 1e-9


def test_deposed_leaders_write_accepted_is_invalid() -> None:
    r = election.check_record(run_record(*deposed_leader(epoch2=2, accepted=True)))
    assert r.valid is False
    assert r.details["stale_accepted"][0]["write"]["writer"] == 1
    assert any("overwrote a newer leader's data" in v for v in r.details["violations"])


def test_two_leaders_with_one_epoch_is_a_service_bug() -> None:
    """epoch-reuse: the new leader gets epoch 1 again, so the deposed leader's write with
    epoch 1 passes the resource's check."""
    r = election.check_record(run_record(*deposed_leader(epoch2=1, accepted=True)))
    assert r.valid is False
    (a,) = r.details["epoch_anomalies"]
    assert (a["kind"], a["classification"]["cause"]) == ("reused", "service-bug")
    assert "got an epoch another leader already had (at most one leader per epoch)" in r.summary
    assert r.details["violations"][0].startswith(
        "e: 1 grant carried an epoch already granted to another leader"
    )
    (s,) = r.details["stale_accepted"]
    assert s["kind"] == "superseded" and s["classification"]["cause"] == "service-bug"


def test_epochs_from_the_services_log() -> None:
    h = history(term(1, 0.0, 0.1, 1, 11, release=1.0), term(2, 0.5, 1.02, 3, 22, release=2.0))
    service = by_time(
        service_lease(11, 0.0),
        service_lease(22, 0.0),
        service_grant(0.05, 11, 3, name="e", election=True),
        service_grant(1.01, 22, 2, name="e", election=True),
    )
    r = election.check_record(run_record([], h, [], service))
    assert r.valid is False
    (a,) = r.details["epoch_anomalies"]
    assert (a["kind"], a["source"]) == ("lowered", "service")
    assert "got a lower epoch than an earlier leader" in r.summary


def test_a_leader_elected_over_a_live_lease_is_two_leaders_at_once() -> None:
    h = history(term(1, 0.0, 0.1, 1, 11), term(2, 0.5, 2.0, 2, 22, release=3.0))
    events = lease_events(1, 11, [0.05, 1.5], lock="e") + lease_events(2, 22, [0.6], lock="e")
    r = election.check_record(run_record([], h, events))
    assert r.valid is False
    (g,) = r.details["overlap_groups"]
    assert g["kind"] == "lease-valid" and g["classification"]["cause"] == "service-bug"
    assert g["summary"].startswith("Two leaders at once: process 1 believed it led e")


def test_a_campaign_that_never_returns_is_no_leadership() -> None:
    h = history((0.0, 1, "invoke", "campaign", {"name": "e"}), term(2, 0.1, 0.2, 1, 22))
    r = election.check_record(run_record([], h, lease_events(2, 22, [0.15], lock="e")))
    assert r.valid is True and r.details["holdings"] == 1
    assert r.details["overlaps"] == []
