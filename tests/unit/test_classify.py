"""checkers.classify: why each takeover and fencing anomaly happened, one rule per cause."""

from __future__ import annotations

from test_mutex_records import (
    S,
    by_time,
    fault,
    history,
    holding,
    lease_events,
    run_record,
    service_lease,
    write,
)

from checkers import mutex
from checkers.classify import (
    CAUSES,
    CLOCK_JUMP,
    CRASH,
    CUT_OFF,
    PAUSED,
    SERVICE_BUG,
    UNEXPLAINED,
    Classification,
    classify_accepted,
    classify_number,
    classify_takeover,
    lease_kind,
)
from checkers.holdings import Holding
from checkers.leases import lease_facts
from checkers.windows import FaultWindow, fault_windows

HOLDER = Holding(process=1, invoked=0, start=int(0.1 * S), number=1, lease=11, name="lock")


def facts(acks: list[float], service: list[dict] | None = None):  # type: ignore[no-untyped-def]
    return lease_facts(lease_events(1, 11, acks), service or [])[11]


def windows(*faults: list) -> list[FaultWindow]:  # type: ignore[type-arg]
    return fault_windows(history(*faults))


# --- the three-way split -----------------------------------------------------------------


def test_lease_kind_from_acknowledgements() -> None:
    f = facts([0.05, 3.0])  # renewal sent at 2.999 s, TTL 10 s
    assert lease_kind(f, int(12.9 * S)) == "lease-valid"
    assert lease_kind(f, int(13.1 * S)) == "lease-expired"  # may have expired
    assert lease_kind(None, int(13.1 * S)) == "lease-unknown"


def test_lease_kind_prefers_the_services_own_account() -> None:
    alive = facts([0.05], service_lease(11, 0.04, [20.0]))
    assert lease_kind(alive, int(25 * S)) == "lease-valid"  # renewed at 20 s by its log
    dead = facts([0.05], service_lease(11, 0.04, expired=10.04))
    assert lease_kind(dead, int(10.5 * S)) == "lease-expired"
    assert lease_kind(lease_facts([], service_lease(11, 0.0))[11], int(S)) == "lease-valid"


# --- one test per cause ------------------------------------------------------------------


def test_paused_holder() -> None:
    ws = windows(fault("client-pause", 5.0, 20.0, {"processes": [1]}))
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(13.5 * S), ws)
    assert (t.kind, t.classification.cause) == ("lease-expired", PAUSED)
    c = t.classification
    assert c.expected is True and c.fault is ws[0] and "fencing" in c.fix
    assert "client process 1 paused" in c.evidence and "13.000 s" in c.evidence


def test_a_pause_of_another_process_does_not_explain_it() -> None:
    ws = windows(fault("client-pause", 5.0, 20.0, {"processes": [2]}))
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(13.5 * S), ws)
    assert t.classification.cause == UNEXPLAINED
    assert "no recorded fault explains" in t.classification.evidence


def test_holder_cut_off_by_a_partition_or_a_paused_node() -> None:
    for kind, value in (("partition", {"grudge": {"n1": ["n2"]}}), ("pause", {"nodes": ["n1"]})):
        ws = windows(fault(kind, 4.0, 20.0, value))
        c = classify_takeover(HOLDER, facts([0.05, 3.0]), int(13.5 * S), ws).classification
        assert c.cause == CUT_OFF and "cut off from the service" in c.evidence, kind
        assert CAUSES[CUT_OFF].expected


def test_a_connection_lost_by_the_client_explains_an_expiry_without_a_fault() -> None:
    """No fault recorded, but kazoo said SUSPENDED: the holder lost its session by the
    network, which is neither a pause nor unexplained."""
    f = facts([0.05, 3.0])
    f.trouble.append((int(4.0 * S), "its client reported its connection lost (SUSPENDED)"))
    c = classify_takeover(HOLDER, f, int(13.5 * S), []).classification
    assert c.cause == CUT_OFF
    assert "its connection lost (SUSPENDED) at 4.000 s" in c.evidence


def test_grant_over_a_valid_lease_is_a_service_bug() -> None:
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(5 * S), [])
    assert (t.kind, t.classification.cause) == ("lease-valid", SERVICE_BUG)
    assert t.classification.expected is False
    assert "valid until at least 12.999 s" in t.classification.evidence
    assert t.classification.label == CAUSES[SERVICE_BUG].label


def test_clock_jump_explains_a_grant_over_a_valid_lease() -> None:
    """Redlock: a node's clock jumps forward, its key expires early, another client gets a
    majority while the first still holds a valid lock by its own clock."""
    ws = windows(fault("clock", 4.0, 8.0, {"offsets": {"n2": 30}}))
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(5 * S), ws)
    assert (t.kind, t.classification.cause) == ("lease-valid", CLOCK_JUMP)
    assert "clock of n2 by +30 s" in t.classification.evidence


def test_crash_explains_a_grant_over_a_valid_lease() -> None:
    """Redis without fsync: the node restarts empty and grants the lock again."""
    ws = windows(fault("kill", 4.0, 4.5, {"nodes": ["n1"]}))
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(5 * S), ws)
    assert (t.kind, t.classification.cause) == ("lease-valid", CRASH)
    assert "the crash lost the lock state" in t.classification.evidence


def test_without_lease_events_a_pause_is_the_probable_cause_but_unconfirmed() -> None:
    ws = windows(fault("client-pause", 1.0, 20.0, {"processes": [1]}))
    t = classify_takeover(HOLDER, None, int(13.5 * S), ws)
    assert (t.kind, t.classification.cause) == ("lease-unknown", PAUSED)
    assert "not confirmed" in t.classification.evidence
    assert classify_takeover(HOLDER, None, int(13.5 * S), []).classification.cause == UNEXPLAINED


def test_number_reuse_is_a_service_bug_unless_a_crash_reset_the_counter() -> None:
    c = classify_number("token", 1 * S, 2 * S, [])
    assert c.cause == SERVICE_BUG and "reused or lowered a fencing token" in c.label
    assert "higher than any granted before" in c.fix
    ws = windows(fault("kill", 1.5, 1.8, {"nodes": ["sim"]}))
    crash = classify_number("epoch", 1 * S, 2 * S, ws)
    assert crash.cause == CRASH and "epoch counter started over" in crash.evidence


def test_accepted_stale_write_blames_the_takeover_or_the_number() -> None:
    paused = Classification.of(PAUSED, "paused")
    assert classify_accepted("token", paused, "token", (0, S), []) is paused
    assert classify_accepted("unfenced", paused, "token", (0, S), []) is paused
    c = classify_accepted("superseded", paused, "token", (0, S), [])
    assert c.cause == SERVICE_BUG and c.evidence.startswith("its token was not lower")


def test_to_dict_is_plain_json() -> None:
    ws = windows(fault("kill", 1.5, 1.8, {"nodes": ["sim"]}))
    d = classify_number("token", 1 * S, 2 * S, ws).to_dict()
    assert d["cause"] == CRASH and d["expected"] is False and d["fault"]["kind"] == "kill"
    assert set(d) == {"cause", "label", "expected", "evidence", "fix", "fault"}


# --- the causes end to end through the mutex checker --------------------------------------


def two_holders(*faults: list, release_first: float | None = None):  # type: ignore[no-untyped-def]
    """1 holds (lease renewed to 5 s, TTL 10 s), 2 is granted the lock at 6 s, both write."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11, release=release_first), holding(2, 0.2, 6.0, 2, 22), *faults
    )
    log = [write(6.1, 2, 2, None, True), write(6.2, 1, 1, 2, True)]
    events = by_time(lease_events(1, 11, [0.05, 2.5, 5.0]), lease_events(2, 22, [0.25]))
    return log, h, events


def test_redlock_clock_jump_end_to_end() -> None:
    r = mutex.check_record(
        run_record(*two_holders(fault("clock", 5.5, 7.0, {"offsets": {"n1": 20}})))
    )
    assert r.valid is False
    (g,) = r.details["overlap_groups"]
    assert (g["kind"], g["classification"]["cause"]) == ("lease-valid", CLOCK_JUMP)
    assert "a node's clock jumped" in g["summary"] and g["summary"].startswith("Two holders")


def test_redis_restart_end_to_end() -> None:
    r = mutex.check_record(run_record(*two_holders(fault("kill", 5.5, 5.8, {"nodes": ["n1"]}))))
    assert r.valid is False
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == CRASH
    assert "a node lost the lock state in a crash" in g["summary"]
    assert "persist the lock state" in g["summary"]


def test_a_pause_that_began_after_the_lease_ran_out_does_not_explain_it() -> None:
    ws = windows(fault("client-pause", 13.5, 20.0, {"processes": [1]}))  # lease out at 13 s
    t = classify_takeover(HOLDER, facts([0.05, 3.0]), int(14 * S), ws)
    assert t.classification.cause == UNEXPLAINED
