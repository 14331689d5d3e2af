"""The own-lock protocol (issue 32): a lock of a library or a user's own, driven through
the lock workload's acquire -> write with its token -> release, its belief recorded."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from core.client import Invocation, WorkerContext
from core.run_clock import RunClock
from workloads.common.resource import WriteResult
from workloads.lock.own import Held, LockLost, OwnLockClient, OwnLockDriver


class MemoryLock:
    """An in-memory lock of the protocol: tokens count up; ``lose`` makes the next
    ``still_held`` and ``release`` say the lock was lost."""

    table: dict[str, int] = {}

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        self.endpoints, self.settings = list(endpoints), dict(settings)
        self.lose = False
        self.tokens = 0

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        if name in self.table:
            return None
        self.tokens += 1
        self.table[name] = self.tokens
        return Held(self.tokens, handle=name)

    def still_held(self, name: str, held: Held) -> bool | None:
        return not self.lose

    def release(self, name: str, held: Held) -> None:
        self.table.pop(name, None)
        if self.lose:
            raise LockLost("expired")

    def close(self) -> None: ...


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> MemoryLock:
    """The ``make`` of ``test_own_lock:make``."""
    return MemoryLock(endpoints, settings)


class _Resource:
    """The protected resource, recording what reached it."""

    def __init__(self) -> None:
        self.writes: list[Any] = []

    def write(self, writer: Any, resource: str, token: int | None, value: Any) -> WriteResult:
        self.writes.append((token, value))
        return WriteResult(True, None, False)

    def close(self) -> None: ...


def _client(tmp_path: Path) -> tuple[OwnLockClient, _Resource, Path]:
    MemoryLock.table.clear()
    events = tmp_path / "events.jsonl"
    ctx = WorkerContext(process=3, clock=RunClock(), events_path=events)
    driver = OwnLockDriver("test_own_lock:make")
    resource = _Resource()
    connect = lambda: driver(["10.0.0.2:6379"], ttl=2.0, wait=0.1, client=3)  # noqa: E731
    client = OwnLockClient(ctx, connect, resource, "lock", 2.0, 1.0, 0.0, 0.1)  # type: ignore[arg-type]
    return client, resource, events


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_granted_lock_writes_with_its_token_and_records_the_locks_belief(
    tmp_path: Path,
) -> None:
    client, resource, events = _client(tmp_path)
    assert client.backend.settings == {"ttl": 2.0, "wait": 0.1, "client": 3}  # type: ignore[attr-defined]
    got = client.invoke(Invocation("acquire", None))
    assert got.type == "ok" and got.value["token"] == 1
    assert "harness/lock" in MemoryLock.table  # asked under the run's prefix
    assert client.invoke(Invocation("write", 5)).type == "ok"
    assert resource.writes == [(1, {"value": 5, "writer": 3, "token": 1})]
    assert client.invoke(Invocation("release", None)).type == "ok"
    client.close()
    kinds = [(e["event"], e.get("held")) for e in _events(events)]
    assert kinds == [
        ("lease-granted", None),
        ("still-held", True),
        ("still-held", True),
        ("lease-ended", None),
    ]
    granted = _events(events)[0]
    assert (granted["token"], granted["by"], granted["ttl"]) == (1, "library", 2.0)


def test_a_second_acquire_not_granted_in_its_wait_fails(tmp_path: Path) -> None:
    client, _, _ = _client(tmp_path)
    MemoryLock.table["harness/lock"] = 99
    got = client.invoke(Invocation("acquire", None))
    assert (got.type, got.error) == ("fail", "not granted: lock held by another for 0.1 s")


def test_a_lock_that_says_it_lost_the_holding_stops_the_write_and_fails_the_release(
    tmp_path: Path,
) -> None:
    client, resource, events = _client(tmp_path)
    client.invoke(Invocation("acquire", None))
    client.backend.lose = True  # type: ignore[attr-defined]
    wrote = client.invoke(Invocation("write", 5))
    assert (wrote.type, wrote.error, resource.writes) == ("fail", "lease lost", [])
    released = client.invoke(Invocation("release", None))
    assert released.type == "fail" and str(released.error).startswith("lease not found")
    lost = [e for e in _events(events) if e["event"] == "lease-lost"]
    assert [e["reason"] for e in lost] == ["the lock says it no longer holds it"]


@pytest.mark.parametrize("answer", ["yes", Held])
def test_an_acquire_answering_something_else_or_raising_is_unknown(
    tmp_path: Path, answer: Any
) -> None:
    client, _, _ = _client(tmp_path)

    def acquire(name: str, ttl: float, wait: float) -> Any:
        if answer is Held:
            raise ConnectionError("reset by peer")
        return answer

    client.backend.acquire = acquire  # type: ignore[method-assign]
    got = client.invoke(Invocation("acquire", None))
    assert got.type == "info", got
