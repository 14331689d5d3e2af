"""clusters.sim.service: the state machine, driven directly with a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from clusters.sim.service import SimService, UnknownBug
from core.store import JsonlWriter, read_jsonl
from workloads.common.wire import RequestError

T = TypeVar("T")
S = 1_000_000_000


class FakeClock:
    def __init__(self) -> None:
        self.t = 0

    def now(self) -> int:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += int(seconds * S)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def service(*bugs: str, **kw: Any) -> tuple[SimService, FakeClock]:
    clock = FakeClock()
    return SimService(clock.now, bugs, **kw), clock


def test_lease_keepalive_and_expiry() -> None:
    svc, clock = service()
    lease = svc.lease_grant(10)["lease"]
    clock.advance(9)
    assert svc.lease_keepalive(lease) == {"ttl": 10}
    clock.advance(9)
    assert svc.lease_ttl(lease)["ttl"] == pytest.approx(1.0)
    clock.advance(1)
    with pytest.raises(RequestError, match="lease not found"):
        svc.lease_keepalive(lease)


def test_tokens_increase_with_every_grant_and_expiry_frees_the_lock(tmp_path: Path) -> None:
    clock = FakeClock()
    with JsonlWriter(tmp_path / "ev.jsonl") as ev:
        svc = SimService(clock.now, events=ev)

        async def scenario() -> list[int]:
            a = svc.lease_grant(1)["lease"]
            t1 = (await svc.lock_acquire("l", a, 0))["token"]
            svc.lock_release("l", a)
            t2 = (await svc.lock_acquire("l", a, 0))["token"]
            b = svc.lease_grant(5)["lease"]
            with pytest.raises(RequestError, match="not granted"):
                await svc.lock_acquire("l", b, 0.01)  # held by a's live lease
            clock.advance(1)  # a expires
            t3 = (await svc.lock_acquire("l", b, 0))["token"]
            return [t1, t2, t3]

        tokens = run(scenario())
    assert tokens == sorted(set(tokens))
    kinds = [e["event"] for e in read_jsonl(tmp_path / "ev.jsonl")]
    assert "lease-expired" in kinds
    released = [e for e in read_jsonl(tmp_path / "ev.jsonl") if e["event"] == "lock-released"]
    assert [e["reason"] for e in released] == ["released", "lease-expired"]


def test_waiters_are_served_in_order_when_the_lock_is_released() -> None:
    svc, _ = service()

    async def scenario() -> list[str]:
        leases = {n: svc.lease_grant(10)["lease"] for n in "abc"}
        await svc.lock_acquire("l", leases["a"], 0)
        order: list[str] = []

        async def take(n: str) -> None:
            await svc.lock_acquire("l", leases[n], 5)
            order.append(n)
            await asyncio.sleep(0.01)
            svc.lock_release("l", leases[n])

        tasks = [asyncio.create_task(take(n)) for n in "bc"]
        await asyncio.sleep(0.01)
        svc.lock_release("l", leases["a"])
        await asyncio.gather(*tasks)
        return order

    assert run(scenario()) == ["b", "c"]


def test_after_a_pause_no_waiter_whose_lease_is_also_due_is_granted(tmp_path: Path) -> None:
    """Sim sweep, pause, seed 4: the server woke from SIGSTOP with the holder's and both
    waiters' leases past their deadlines; expiring them one by one granted the lock to
    each waiter in turn (tokens 13 and 14 to leases already due): two holders."""
    clock = FakeClock()
    with JsonlWriter(tmp_path / "ev.jsonl") as ev:
        svc = SimService(clock.now, events=ev)

        async def scenario() -> list[str]:
            leases = {n: svc.lease_grant(2)["lease"] for n in "abc"}
            await svc.lock_acquire("l", leases["a"], 0)
            waiting = [asyncio.create_task(svc.lock_acquire("l", leases[n], 30)) for n in "bc"]
            await asyncio.sleep(0.01)
            clock.advance(3)  # the server was paused past every deadline
            svc.expire_due()
            outcomes = await asyncio.gather(*waiting, return_exceptions=True)
            return [str(o) for o in outcomes]

        assert run(scenario()) == ["lease not found", "lease not found"]
    events = [e["event"] for e in read_jsonl(tmp_path / "ev.jsonl")]
    assert "lock-granted" not in events[events.index("lease-expired") :]


def test_release_by_a_non_holder_is_refused() -> None:
    svc, _ = service()
    lease = svc.lease_grant(10)["lease"]
    with pytest.raises(RequestError, match="not the holder"):
        svc.lock_release("l", lease)


def test_token_reuse_bug() -> None:
    svc, _ = service("token-reuse")

    async def scenario() -> tuple[int, int]:
        a = svc.lease_grant(10)["lease"]
        t1 = (await svc.lock_acquire("l", a, 0))["token"]
        svc.lock_release("l", a)
        t2 = (await svc.lock_acquire("l", a, 0))["token"]
        return t1, t2

    t1, t2 = run(scenario())
    assert t1 == t2


def test_lock_ignores_lease_bug_grants_over_a_live_holder() -> None:
    svc, _ = service("lock-ignores-lease", lock_grace_s=0.05)

    async def scenario() -> tuple[int, int, Any]:
        a, b = svc.lease_grant(10)["lease"], svc.lease_grant(10)["lease"]
        ta = (await svc.lock_acquire("l", a, 0))["token"]
        tb = (await svc.lock_acquire("l", b, 5))["token"]
        try:
            svc.lock_release("l", a)
        except RequestError as e:
            return ta, tb, str(e)
        return ta, tb, None

    ta, tb, err = run(scenario())
    assert tb > ta and err == "not the holder"


def test_elections_epochs_observe_resign_and_epoch_reuse() -> None:
    for bugs, increases in (((), True), (("epoch-reuse",), False)):
        svc, clock = service(*bugs)

        async def scenario(svc: SimService = svc, clock: FakeClock = clock) -> list[Any]:
            a, b = svc.lease_grant(1)["lease"], svc.lease_grant(10)["lease"]
            e1 = (await svc.elect_campaign("e", a, "A", 0))["epoch"]
            seen = svc.elect_observe("e")
            clock.advance(1)  # a's lease expires: leadership freed
            gone = svc.elect_observe("e")
            e2 = (await svc.elect_campaign("e", b, "B", 0))["epoch"]
            svc.elect_resign("e", b)
            return [e1, seen, gone, e2]

        e1, seen, gone, e2 = run(scenario())
        assert seen == {"leader": "A", "epoch": e1}
        assert gone["leader"] is None
        assert (e2 > e1) if increases else (e2 == e1)


def test_registers_and_stale_read_bug() -> None:
    svc, _ = service()
    svc.reg_write("k", 1)
    svc.reg_cas("k", 1, 2)
    with pytest.raises(RequestError, match="cas mismatch"):
        svc.reg_cas("k", 1, 3)
    assert svc.reg_read("k") == {"value": 2}
    buggy, _ = service("stale-read", stale_read_probability=1.0, seed=1)
    buggy.reg_write("k", 1)
    buggy.reg_write("k", 2)
    assert buggy.reg_read("k")["value"] in (None, 1)


def test_unknown_bug_names_the_known_ones() -> None:
    with pytest.raises(UnknownBug, match="token-reuse"):
        service("no-such-bug")
