"""checkers.mutex on constructed histories, resource logs and client events."""

from __future__ import annotations

from typing import Any

from checkers.mutex import check_mutex
from harness.history import History

S = 1_000_000_000
TTL = 10.0


def history(*events: tuple[float, int, str, str, Any]) -> History:
    """(time s, process, type, f, value) tuples -> History."""
    return History.from_events(
        {"time": int(t * S), "process": p, "type": ty, "f": f, "value": v}
        for t, p, ty, f, v in events
    )


def lease_events(process: int, lease: int, acks: list[float], lost: float | None = None) -> list:
    """lease-granted at acks[0], keepalives at the rest (sent 1 ms before), maybe a loss."""
    out = [{"time": int(acks[0] * S), "sent": int(acks[0] * S) - 1_000_000, "process": process,
            "event": "lease-granted", "lease": lease, "ttl": TTL, "lock": "lock"}]  # fmt: skip
    out += [{"time": int(t * S), "sent": int(t * S) - 1_000_000, "process": process,
             "event": "keepalive", "lease": lease, "ttl": TTL, "lock": "lock"}
            for t in acks[1:]]  # fmt: skip
    if lost is not None:
        out.append({"time": int(lost * S), "process": process, "event": "lease-lost",
                    "lease": lease, "ttl": TTL, "lock": "lock", "reason": "gone"})  # fmt: skip
    return out


def write(t: float, writer: int, token: int | None, highest: int | None, accepted: bool) -> dict:
    return {"time": int(t * S), "writer": writer, "resource": "lock", "token": token,
            "value": f"v{writer}", "accepted": accepted, "highest_before": highest,
            "unfenced": token is None}  # fmt: skip


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
    r = check_mutex(*paused_holder(fencing=True))
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
    r = check_mutex(*paused_holder(fencing=False))
    assert r.valid is False
    (s,) = r.details["stale_accepted"]
    assert s["write"]["writer"] == 1 and s["lease_expiry"] == 22 * S
    text = s["explanation"]
    assert "token 1" in text and "accepted" in text
    assert "4.000 s later" in text  # the danger window, in words
    assert text in r.summary


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
    r = check_mutex([], h, events)
    assert r.valid is False
    (o,) = r.details["overlaps"]
    assert o["kind"] == "lease-valid"
    assert (o["first"]["process"], o["later"]["process"]) == (1, 2)
    assert "Two holders at once" in r.summary and "still valid" in r.summary


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
    r = check_mutex(log, h, events)
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
    r = check_mutex(log, h, lease_events(1, 11, [0.05, 3.0]))
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
    r = check_mutex(log, h, events)
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
    r = check_mutex(log, h, lease_events(1, 11, [0.05]) + lease_events(2, 22, [1.0]))
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
    r = check_mutex([], h, [])
    assert r.valid == "unknown"
    assert r.details["overlaps"][0]["kind"] == "lease-unknown"


def test_nothing_held_proves_nothing() -> None:
    h = history((0.0, 1, "invoke", "acquire", None), (5.0, 1, "fail", "acquire", None))
    assert check_mutex([], h, []).valid == "unknown"


def test_election_ops_count_as_holdings() -> None:
    h = history(
        (0.0, 1, "invoke", "campaign", 1),
        (0.1, 1, "ok", "campaign", {"epoch": 3, "lease": 11}),
        (0.2, 1, "invoke", "resign", None),
        (0.3, 1, "ok", "resign", None),
    )
    r = check_mutex([write(0.15, 1, 3, None, True)], h, lease_events(1, 11, [0.05]))
    assert r.valid is True and r.details["holdings"] == 1


def test_holders_of_different_locks_do_not_overlap() -> None:
    h = history(
        (0.0, 1, "invoke", "acquire", {"name": "a"}),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11, "name": "a"}),
        (0.2, 2, "invoke", "acquire", {"name": "b"}),
        (0.3, 2, "ok", "acquire", {"token": 2, "lease": 22, "name": "b"}),
    )
    events = lease_events(1, 11, [0.05]) + lease_events(2, 22, [0.25])
    r = check_mutex([], h, events)
    assert r.valid is True and r.details["overlaps"] == []
