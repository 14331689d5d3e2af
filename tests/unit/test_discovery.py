"""checkers.discovery and checkers.membership: a dead instance listed past its TTL plus
the service's grace is invalid; detection times, removals of live instances with their
cause, stale listings and recovery are measured; the registry workload's schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkers import discovery
from checkers.record import RunRecord
from clusters.sim.service import SimService
from clusters.sim.wal import WriteAheadLog
from core.faults import PARTITION
from core.gen import Context, Request
from core.history import History
from core.ops import Op
from nemesis.faults import client_kill, client_pause, partition
from workloads.common.wire import RequestError
from workloads.discovery.gen import Discovery

TTL, GRACE = 3.0, 1.0
FAULTS = {f.name: f.facts() for f in (client_pause.FAULT, client_kill.FAULT, partition.FAULT)}


class Run:
    """A registry history built op by op, times in seconds."""

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []

    def op(self, t: float, p: Any, ty: str, f: str, value: Any = None, **more: Any) -> None:
        self.ops.append({"time": int(t * 1e9), "process": p, "type": ty, "f": f, "value": value})
        self.ops[-1].update(more)

    def register(self, t: float, p: int) -> None:
        self.op(t, p, "invoke", "register")
        self.op(t + 0.01, p, "ok", "register", {"member": f"i{p}", "ttl": TTL, "grace": GRACE})

    def heartbeats(self, p: int, start: float, end: float, registered: bool = True) -> None:
        t = start
        while t < end:
            self.op(t, p, "invoke", "heartbeat")
            self.op(t + 0.001, p, "ok", "heartbeat", {"member": f"i{p}", "registered": registered})
            t += 0.5

    def lists(self, p: int, start: float, end: float, members: Any, node: str = "n1") -> None:
        """Listings every 0.2 s; ``members(t)`` is what the service answers at ``t``."""
        t = start
        while t < end:
            self.op(t, p, "invoke", "list", node=None)
            self.op(t + 0.01, p, "ok", "list", {"members": sorted(members(t))}, node=node)
            t += 0.2

    def fault(self, kind: str, start: float, stop: float, value: Any) -> None:
        self.op(start, "nemesis", "invoke", f"start-{kind}", {"target": "holder"})
        self.op(start + 0.01, "nemesis", "ok", f"start-{kind}", value)
        self.op(stop, "nemesis", "invoke", f"stop-{kind}")
        self.op(stop + 0.01, "nemesis", "ok", f"stop-{kind}")

    def check(self) -> Any:
        ops = sorted(self.ops, key=lambda o: o["time"])
        record = RunRecord(History.from_events(ops), test={"faults": FAULTS})
        return discovery.check_record(record)


def paused(listed: Any, pause: tuple[float, float] = (5.0, 15.0)) -> Run:
    """i0 and i1 registered at 1 s; i1 paused ``pause``; two discovery clients list what
    ``listed(t)`` says; i1 re-registers 0.5 s after waking."""
    r = Run()
    start, stop = pause
    r.register(1.0, 0)
    r.register(1.0, 1)
    r.heartbeats(0, 1.5, 20.0)
    r.heartbeats(1, 1.5, start - 0.1)
    r.fault("client-pause", start, stop, {"processes": [1]})
    r.heartbeats(1, stop + 0.02, stop + 0.4, registered=False)
    r.register(stop + 0.5, 1)
    r.heartbeats(1, stop + 1.0, 20.0)
    r.lists(2, 1.05, 20.0, listed)
    r.lists(3, 1.15, 20.0, listed, node="n2")
    return r


def expires_at(t_gone: float, back: float = 15.6) -> Any:
    return lambda t: {"i0"} | ({"i1"} if t < t_gone or t >= back else set())


def test_a_paused_instance_removed_within_the_deadline_is_valid_and_measured() -> None:
    res = paused(expires_at(7.9)).check()
    assert res.valid is True, res.summary
    (death,) = res.details["deaths"]
    assert death["member"] == "i1" and death["kind"] == "paused" and death["expected_removal"]
    assert 2.7 < death["detection_s"] < 3.2  # from the pause's proof (5.01 s) to ~8.0 s
    assert 0.4 < death["reregistered_s"] < 0.6 and 0.5 < death["relisted_s"] < 0.9
    assert res.details["violations"] == [] and res.details["false_removals"] == 0
    gaps = res.details["live_removals"]  # awake 15.01..15.6 before it is listed again
    assert [g["clients"] for g in gaps] == [["2"], ["3"]], gaps  # one episode per client
    assert all(g["member"] == "i1" and g["expected"] and "expected" in g["cause"] for g in gaps)
    assert "removed from every listing in" in res.summary


def test_a_dead_instance_listed_past_ttl_and_grace_is_invalid() -> None:
    res = paused(expires_at(10.0)).check()
    assert res.valid is False
    (v,) = res.details["violations"]
    assert v["member"] == "i1" and v["after_s"] > TTL + GRACE + 0.5
    assert "i1" in res.summary and "longer than its TTL 3 s + the service's grace 1 s" in (
        res.summary
    )


def test_the_deadline_counts_from_the_end_of_a_fault_on_the_servers() -> None:
    r = paused(expires_at(10.0))
    r.fault(PARTITION.name, 4.0, 7.0, {"grudge": {"n1": ["n2", "n3"]}})
    res = r.check()
    assert res.valid is True, res.summary  # 10 s is within 7.01 + 4.5 s


def test_a_death_no_client_could_observe_after_the_deadline_is_unknown() -> None:
    r = Run()
    r.register(1.0, 0)
    r.heartbeats(0, 1.5, 5.0)
    r.fault("client-pause", 5.0, 15.0, {"processes": [0]})
    r.lists(2, 1.05, 6.0, lambda t: {"i0"})
    res = r.check()
    assert res.valid == "unknown" and "detection unknown" in res.summary


def test_a_killed_instance_is_detected_and_its_successor_is_a_new_member() -> None:
    r = Run()
    r.register(1.0, 0)
    r.heartbeats(0, 1.5, 5.0)
    r.fault("client-kill", 5.0, 9.0, {"processes": [0]})
    r.op(5.2, 0, "invoke", "heartbeat")
    r.op(5.21, 0, "info", "heartbeat", error="worker process died mid-operation")
    r.register(5.3, 3)
    r.heartbeats(3, 5.8, 12.0)
    r.lists(
        2, 1.05, 12.0, lambda t: ({"i0"} if t < 7.5 else set()) | ({"i3"} if t > 5.4 else set())
    )
    res = r.check()
    assert res.valid is True, res.summary
    (death,) = res.details["deaths"]
    assert death["kind"] == "killed" and death["until"] is None
    assert 2.4 < death["detection_s"] < 2.7
    assert res.details["members"] == ["i0", "i3"] and res.details["false_removals"] == 0


def test_a_live_instance_dropped_is_reported_with_its_cause_not_judged() -> None:
    def dropped(t: float) -> set[str]:
        return {"i1"} | ({"i0"} if not 6.0 <= t < 7.0 else set())

    r = Run()
    r.register(1.0, 0)
    r.register(1.0, 1)
    r.heartbeats(0, 1.5, 12.0)
    r.heartbeats(1, 1.5, 12.0)
    r.lists(2, 1.05, 12.0, dropped)
    res = r.check()
    assert res.valid is True, res.summary
    (gap,) = res.details["live_removals"]
    assert gap["member"] == "i0" and not gap["expected"] and gap["cause"].startswith("unexplained")
    assert res.details["false_removals"] == 1 and "1 live instance dropped" in res.summary
    r.fault(PARTITION.name, 5.0, 8.0, {"grudge": {"n1": ["n2", "n3"]}})
    res = r.check()
    (gap,) = res.details["live_removals"]
    assert gap["cause"].startswith("during a network partition"), gap
    assert gap["kind"] == "during-fault" and res.details["false_removals"] == 0


def test_a_client_listing_what_another_saw_removed_is_a_stale_listing() -> None:
    r = paused(expires_at(7.9))
    r.lists(4, 8.5, 9.5, lambda t: {"i0", "i1"}, node="n3")  # a client on a cut-off node
    res = r.check()
    stale = res.details["stale_listings"]
    assert stale and {s["node"] for s in stale} == {"n3"} and stale[0]["member"] == "i1"


def test_values_of_the_wrong_shape_read_as_empty_not_as_a_crash() -> None:
    r = paused(expires_at(7.9))
    r.op(2.0, 2, "invoke", "list")
    r.op(2.01, 2, "ok", "list", "junk")
    r.op(2.1, 0, "invoke", "heartbeat")
    r.op(2.11, 0, "ok", "heartbeat", ["registered"])
    r.op(2.2, 3, "invoke", "list")
    r.op(2.21, 3, "ok", "list", {"members": 7})
    res = r.check()
    assert res.valid is True, res.summary  # two empty listings: i0 and i1 absent, reported
    assert {g["member"] for g in res.details["live_removals"]} >= {"i0"}


def test_nothing_registered_or_nothing_listed_is_unknown() -> None:
    assert Run().check().valid == "unknown"
    r = Run()
    r.register(1.0, 0)
    assert r.check().valid == "unknown"


def at(t: float, free: set[int], processes: dict[int, int] | None = None) -> Context:
    return Context(int(t * 1e9), frozenset(free), processes or {0: 0, 1: 1})


def event(t: float, p: int, ty: str, f: str, value: Any = None) -> Op:
    return Op(index=0, time=int(t * 1e9), process=p, type=ty, f=f, value=value)  # type: ignore[arg-type]


def test_the_schedule_registers_instances_lists_with_the_others_and_reregisters() -> None:
    g = Discovery(instances=1)
    req, _ = g.op(at(0, {0, 1}))
    assert isinstance(req, Request) and (req.process, req.f) == (0, "register")
    g = g.update(at(0.1, {0, 1}), event(0.1, 0, "ok", "register", {"member": "i0"}))
    req, _ = g.op(at(0.1, {0, 1}))
    assert isinstance(req, Request) and (req.process, req.f) == (1, "list")
    req, _ = g.op(at(0.1, {0}))
    assert isinstance(req, Request) and req.f == "heartbeat" and req.time == int(0.6e9)
    g = g.update(at(0.7, {0}), event(0.7, 0, "ok", "heartbeat", {"registered": False}))
    req, _ = g.op(at(0.7, {0}))
    assert isinstance(req, Request) and req.f == "register" and req.time == int(0.7e9)
    g = g.update(at(0.8, {0}), event(0.8, 0, "info", "register"))
    req, _ = g.op(at(0.8, {0}, {0: 2, 1: 1}))
    assert isinstance(req, Request) and (req.process, req.f) == (2, "register")


def test_the_sim_service_lists_a_member_while_its_lease_lives_across_a_restart(
    tmp_path: Path,
) -> None:
    now = [0]
    svc = SimService(lambda: now[0], wal=WriteAheadLog(tmp_path / "wal"))
    lease = svc.lease_grant(3.0)["lease"]
    svc.member_register("i0", lease)
    assert svc.member_list() == {"members": ["i0"]}
    now[0] = int(2.9e9)
    svc = SimService(lambda: now[0], wal=WriteAheadLog(tmp_path / "wal"))  # restarted
    assert svc.member_list() == {"members": ["i0"]}
    now[0] = int(3.0e9)
    assert svc.member_list() == {"members": []}
    with pytest.raises(RequestError, match="lease not found"):
        svc.member_register("i1", lease)
