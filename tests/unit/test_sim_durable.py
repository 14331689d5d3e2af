"""The sim service's write-ahead log: state survives a crash, unless ``forget-on-restart``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clusters.sim.service import SimService
from clusters.sim.wal import WriteAheadLog
from workloads.common.wire import RequestError

S = 1_000_000_000


class FakeClock:
    def __init__(self) -> None:
        self.t = 0

    def now(self) -> int:
        return self.t


def life(path: Path, clock: FakeClock, *bugs: str) -> SimService:
    """One life of the server: a service on the log at ``path`` (a crash is dropping it)."""
    return SimService(clock.now, bugs, wal=WriteAheadLog(path))


def crash_mid_life(path: Path, clock: FakeClock, *bugs: str) -> tuple[SimService, dict[str, Any]]:
    """A first life that holds a lock and an election, writes a register, then dies."""
    svc = life(path, clock, *bugs)

    async def scenario() -> dict[str, Any]:
        a = svc.lease_grant(10)["lease"]
        token = (await svc.lock_acquire("l", a, 0))["token"]
        epoch = (await svc.elect_campaign("e", a, "me", 0))["epoch"]
        svc.reg_write("k", 1)
        svc.reg_cas("k", 1, 2)
        svc.sync()
        return {"lease": a, "token": token, "epoch": epoch}

    return svc, asyncio.run(scenario())


def test_state_survives_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    _, got = crash_mid_life(tmp_path / "wal", clock)
    clock.t += 3 * S
    svc = life(tmp_path / "wal", clock)  # the restarted server
    assert svc.lock_holder("l") == {"lease": got["lease"], "token": got["token"]}
    assert svc.elect_observe("e") == {"leader": "me", "epoch": got["epoch"]}
    assert svc.reg_read("k") == {"value": 2}
    assert svc.lease_ttl(got["lease"])["ttl"] == pytest.approx(7.0)  # expiry kept on the clock

    async def next_grant() -> int:
        b = svc.lease_grant(10)["lease"]
        with pytest.raises(RequestError, match="not granted"):
            await svc.lock_acquire("l", b, 0)  # still held under a live lease
        svc.lease_revoke(got["lease"])
        return int((await svc.lock_acquire("l", b, 0))["token"])

    assert asyncio.run(next_grant()) > max(got["token"], got["epoch"])  # tokens never go back


def test_a_lease_that_ran_out_while_down_expires_at_its_deadline(tmp_path: Path) -> None:
    clock = FakeClock()
    _, got = crash_mid_life(tmp_path / "wal", clock)
    clock.t += 30 * S
    svc = life(tmp_path / "wal", clock)
    svc.expire_due()
    assert svc.lock_holder("l") == {"lease": None, "token": None}
    assert svc.elect_observe("e")["leader"] is None
    with pytest.raises(RequestError, match="lease not found"):
        svc.lease_keepalive(got["lease"])


def test_a_torn_last_record_is_skipped(tmp_path: Path) -> None:
    clock = FakeClock()
    crash_mid_life(tmp_path / "wal", clock)
    with open(tmp_path / "wal", "ab") as f:
        f.write(b'{"t":"reg","key":"k","val')  # the crash cut the unacknowledged write
    assert life(tmp_path / "wal", clock).reg_read("k") == {"value": 2}


def test_the_life_after_a_torn_record_keeps_its_own(tmp_path: Path) -> None:
    """The first record of the life after a crash joined the torn line and was lost at the
    next restart."""
    from clusters.sim.wal import WriteAheadLog

    path = tmp_path / "wal"
    first = WriteAheadLog(path)
    first.append({"a": 1})
    first.close()
    with open(path, "ab") as f:
        f.write(b'{"torn')
    second = WriteAheadLog(path)
    second.append({"b": 2})
    second.close()
    assert list(WriteAheadLog(path).records()) == [{"a": 1}, {"b": 2}]


def test_forget_on_restart_bug_comes_back_empty(tmp_path: Path) -> None:
    clock = FakeClock()
    _, got = crash_mid_life(tmp_path / "wal", clock, "forget-on-restart")
    svc = life(tmp_path / "wal", clock, "forget-on-restart")
    assert svc.lock_holder("l") == {"lease": None, "token": None}
    assert svc.reg_read("k") == {"value": None}

    async def grant_again() -> int:
        b = svc.lease_grant(10)["lease"]
        assert b != got["lease"]  # lease ids are never reused, even by a forgetful server
        return int((await svc.lock_acquire("l", b, 0))["token"])

    assert asyncio.run(grant_again()) <= got["token"]  # granted again, with an old token


def test_the_requests_of_one_turn_share_one_fsync_and_none_is_answered_before_it(
    tmp_path: Path,
) -> None:
    """Group commit (``GroupCommit``): twenty writes served in one turn of the loop wait
    for one fsync, run off the loop, after which every change is on disk; a read that
    could have seen a change not yet on disk waits for it too; with nothing unsynced,
    nothing waits."""
    from clusters.sim.server import make_handler

    svc = life(tmp_path / "wal.jsonl", FakeClock())
    syncs: list[str] = []
    real = svc.detach_sync

    def counted() -> Any:
        sync = real()
        if sync is None:
            return None

        def fsync() -> None:
            syncs.append("fsync")
            sync()

        return fsync

    svc.detach_sync = counted  # type: ignore[method-assign]
    handle = make_handler(svc)

    async def scenario() -> list[Any]:
        writes = [handle("reg_write", {"key": f"k{i}", "value": i}) for i in range(20)]
        return await asyncio.gather(*writes, handle("reg_read", {"key": "k3"}))

    answers = asyncio.run(scenario())
    assert answers == [{}] * 20 + [{"value": 3}]
    assert syncs == ["fsync"] and not svc.unsynced()  # one fsync, for all of them

    async def read() -> Any:
        return await handle("reg_read", {"key": "k3"})

    assert asyncio.run(read()) == {"value": 3}
    assert syncs == ["fsync"]  # nothing unsynced: the read did not wait for a sync


def test_a_failed_group_fsync_is_each_waiting_requests_error(tmp_path: Path) -> None:
    from clusters.sim.server import make_handler

    svc = life(tmp_path / "wal.jsonl", FakeClock())

    def broken() -> None:
        raise OSError(5, "Input/output error")

    svc.detach_sync = lambda: broken  # type: ignore[method-assign]
    handle = make_handler(svc)

    async def scenario() -> list[Any]:
        writes = [handle("reg_write", {"key": "k", "value": i}) for i in range(3)]
        return await asyncio.gather(*writes, return_exceptions=True)

    assert [type(e) for e in asyncio.run(scenario())] == [OSError] * 3
