"""What an abandoned (timed-out) worker did is evidence: the mutex checker uses it.

The shape of issue 15's Consul run (``harness run --target consul --workload lock
--lease-ttl 10 --nemesis client-pause --pause-at 12 --pause-for 14``): process 0 holds the
lock (token 39) and is frozen at 12 s in the middle of its write; the write times out at
22 s (``info``) and the runner abandons the worker, spawning process 3 for its thread.
Consul may keep a session up to twice its TTL, so when process 0 wakes at 26 s its
renewal is still acknowledged and its write completes ``ok`` (a late completion); the
runner then stops the worker, whose client closes and destroys its session, and process 3
is granted the lock 54 ms later. That run was reported as "a bug in the coordination
service": the close was the harness's own doing and went unrecorded.
"""

from __future__ import annotations

from typing import Any

from test_mutex_records import history, lease_events, ns, run_record, write

from checkers import mutex
from checkers.classify import ABANDONED
from checkers.holdings import LOCK, holdings, late_completions
from core.history import History


def _consul_run() -> tuple[list[dict[str, Any]], History, list[dict[str, Any]]]:
    h = history(
        (1.0, 0, "invoke", "acquire", None),
        (1.1, 0, "ok", "acquire", {"token": 39, "lease": "s0", "name": "lock"}),
        (12.0, 0, "invoke", "write", "a"),
        (22.0, 0, "info", "write", None),  # timed out: the worker is abandoned
        (22.1, 3, "invoke", "acquire", None),
        (26.07, 3, "ok", "acquire", {"token": 40, "lease": "s3", "name": "lock"}),
        (26.1, 3, "invoke", "write", "b"),
        (26.5, 3, "ok", "write", None),
        (26.6, 3, "invoke", "release", None),
        (26.7, 3, "ok", "release", None),
    )
    log = [write(26.0, 0, 39, 39, True), write(26.4, 3, 40, 39, True)]
    events = lease_events(0, "s0", [1.1, 4, 7, 10, 26.0])  # the renewal after the pause
    events += lease_events(3, "s3", [26.05])
    return log, h, events


def _late_and_closed(close: bool) -> list[dict[str, Any]]:
    out = [
        {
            "time": ns(26.01),
            "process": 0,
            "event": "late-completion",
            "f": "write",
            "invoked": ns(12.0),
            "type": "ok",
            "value": "a",
            "error": None,
        }
    ]
    if close:
        out.append(
            {
                "time": ns(26.03),
                "sent": ns(26.02),
                "process": 0,
                "event": "lease-ended",
                "lease": "s0",
                "ttl": 10.0,
                "lock": "lock",
                "reason": "closed",
            }
        )
    return out


def test_the_close_of_an_abandoned_holder_ends_its_holding() -> None:
    log, h, events = _consul_run()
    r = mutex.check_record(run_record(log, h, events + _late_and_closed(close=True)))
    assert r.valid is True, r.summary
    assert not r.details["overlaps"]


def test_without_the_close_an_abandoned_holder_is_not_blamed_on_the_service() -> None:
    """Before the runner recorded it: the overlap remains, with a renewal acknowledged
    at 26 s, but the holder had been abandoned: unknown, not a service bug."""
    log, h, events = _consul_run()
    r = mutex.check_record(run_record(log, h, events))
    assert r.valid == "unknown", r.summary
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == ABANDONED
    assert "timed out at 22.000 s" in g["classification"]["evidence"]
    assert "bug in the coordination service" not in r.summary
    assert "Two holders at once" not in r.summary


def test_a_late_ok_makes_an_abandoned_take_a_definite_holding() -> None:
    """An acquire that timed out but returned ok later did hold the lock, from then."""
    h = history(
        (1.0, 0, "invoke", "acquire", None),
        (11.0, 0, "info", "acquire", None),
    )
    late = late_completions(
        [
            {
                "time": ns(14.0),
                "process": 0,
                "event": "late-completion",
                "f": "acquire",
                "invoked": ns(1.0),
                "type": "ok",
                "value": {"token": 5, "lease": 7, "name": "lock"},
            }
        ]
    )
    (x,) = holdings(h, LOCK, late)
    assert x.definite and x.start == ns(14.0) and x.number == 5 and x.late
    assert x.abandoned == ns(11.0)
    (y,) = holdings(h, LOCK)
    assert not y.definite and y.abandoned == ns(11.0)


def test_the_service_ttl_answered_bounds_the_lease() -> None:
    """A ZooKeeper session timeout is negotiated: a renewal answered with 4 s proves the
    lease alive for 4 s, not for the 10 s asked."""
    from checkers.leases import lease_facts

    events = lease_events(1, 11, [0.0, 1.0])
    events[-1]["service_ttl"] = 4.0
    facts = lease_facts(events)[11]
    assert facts.certainly_alive(ns(4.5)) and not facts.certainly_alive(ns(5.5))


def test_a_work_time_over_the_op_timeout_is_not_a_mutex_violation() -> None:
    """Issue 15 item 2, as recorded on ZooKeeper (``--work-time 20``, op timeout 10 s, a
    partition): process 2's write times out at 23.78 s, returns ok at 33.765 s, its worker
    is stopped and closes its session at 33.766 s; process 5 is granted the lock at
    33.922 s. Neither checker may call that two holders at once."""
    from checkers import mutex_lin

    h = history(
        (13.41, 2, "invoke", "acquire", None),
        (13.76, 2, "ok", "acquire", {"token": 11, "lease": 48, "name": "lock"}),
        (13.77, 2, "invoke", "write", "a"),
        (23.78, 2, "info", "write", None),
        (29.68, 5, "invoke", "acquire", None),
        (33.922, 5, "ok", "acquire", {"token": 32, "lease": 50, "name": "lock"}),
        (33.93, 5, "invoke", "release", None),
        (33.94, 5, "ok", "release", None),
    )
    events = lease_events(2, 48, [13.5, 16.5, 19.5, 22.5, 33.0])
    events += lease_events(5, 50, [29.7, 32.7])
    events += [
        {
            "time": ns(33.765),
            "process": 2,
            "event": "late-completion",
            "f": "write",
            "invoked": ns(13.77),
            "type": "ok",
            "value": "a",
        },
        {
            "time": ns(33.767),
            "sent": ns(33.766),
            "process": 2,
            "event": "lease-ended",
            "lease": 48,
            "ttl": 10.0,
            "lock": "lock",
            "reason": "closed",
        },
    ]
    log = [write(33.76, 2, 11, 11, True)]
    assert mutex.check_record(run_record(log, h, events)).valid is True
    r = mutex_lin.check_record(run_record([], h, events))
    assert r.valid is True, r.summary


def test_our_own_history_with_63_bit_lease_ids_reads(tmp_path: Any) -> None:
    """An etcd lease id (7408318254357351430, 63 bits) in an acquire's value, as a real run
    recorded it: the reader refused the harness's own history ("beyond 64 bits")."""
    from core.formats import read_file

    line = (
        '{"index":0,"time":9018000000,"process":0,"type":"invoke","f":"acquire",'
        '"value":{"name":"lock-0"}}\n'
        '{"index":1,"time":9018809182,"process":0,"type":"ok","f":"acquire","value":'
        '{"token":2,"lease":7408318254357351430,"name":"lock-0"},"node":"n1"}\n'
    )
    path = tmp_path / "history.jsonl"
    path.write_text(line)
    read = read_file(path)
    assert read.history[1].value["lease"] == 7408318254357351430


def test_a_cut_off_follower_answering_renewals_is_not_the_service() -> None:
    """Recorded on ZooKeeper (``--nemesis partition --nemesis-target holder``, lease 3 s,
    work 4 s, fencing off): process 1 holds token 313 from 33.046 s, its server n2 is cut
    off from the others; n2 keeps answering its renewals (reads, from its own state) until
    35.9 s; the leader expires the session and process 3 is granted token 324 at 36.177 s;
    process 1's write arrives at 37.069 s, before process 3 wrote anything. This was called
    "the service granted the lock while the previous lease was still valid" and "the
    service reused or lowered a fencing token": neither is true."""
    h = history(
        (33.0, 1, "invoke", "acquire", None),
        (33.046, 1, "ok", "acquire", {"token": 313, "lease": 60, "name": "lock"}),
        (33.05, 1, "invoke", "write", "a"),
        (32.5, "nemesis", "invoke", "start-partition", {"topology": "holder"}),
        (33.5, "nemesis", "ok", "start-partition", {"grudge": {"n2": ["n1", "n3"]}}),
        (33.2, 3, "invoke", "acquire", None),
        (36.177, 3, "ok", "acquire", {"token": 324, "lease": 70, "name": "lock"}),
        (37.07, 1, "ok", "write", None),
        (37.071, 1, "invoke", "release", None),
        (37.08, 1, "fail", "release", None),
        (36.2, 3, "invoke", "write", "b"),
        (40.2, 3, "ok", "write", None),
        (43.5, "nemesis", "invoke", "stop-partition", None),
        (43.6, "nemesis", "ok", "stop-partition", None),
    )
    events = lease_events(1, 60, [33.0, 33.9, 34.9, 35.9], ttl=3.0)
    for e in events[1:]:
        e["local"] = True
    events += lease_events(3, 70, [36.1, 37.1, 38.1, 39.1, 40.1], ttl=3.0)
    log = [write(37.069, 1, 313, None, True), write(40.19, 3, 324, 313, True)]
    r = mutex.check_record(run_record(log, h, events))
    text = r.summary
    assert "by its own account" not in text and "reused or lowered" not in text, text
    (g,) = r.details["overlap_groups"]
    assert g["classification"]["cause"] == "lease-expired-while-cut-off"
    assert "answered by the one server it was connected to" in g["classification"]["evidence"]


def test_a_stale_write_of_an_abandoned_holder_is_unknown_not_invalid() -> None:
    """The same run without the close, fencing off, the late write arriving after the next
    grant: accepted, but all that explains it is the harness's abandoning the holder."""
    log, h, events = _consul_run()
    log[0] = write(26.1, 0, 39, 39, True)
    r = mutex.check_record(run_record(log, h, events))
    assert r.valid == "unknown", r.summary
    assert r.details["stale_accepted"] and not r.details["violations"]
