"""Redis's error classification and the Redlock algorithm's outcomes, without Docker.

``redis-py`` exceptions: never sent or refused by the server -> fail; a lock key no longer
ours -> ``LeaseNotFound``; sent and unanswered or cut off -> info. Redlock: a majority of
definite answers decides; lost answers that could tip it leave the outcome unknown (info).
"""

from __future__ import annotations

import socket

import pytest
import redis
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    DataError,
    LockError,
    LockNotOwnedError,
    ReadOnlyError,
    ResponseError,
)

from clusters.redis.connection import connect
from clusters.redis.errors import classify
from clusters.redis.lock import SetNxLock
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown, Unreachable
from workloads.lock.redlock import Redlock


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (
            redis.ConnectionError("Error 111 connecting to 10.77.0.11:6379. Connection refused."),
            Unreachable,
        ),
        (redis.TimeoutError("Timeout connecting to server"), Unreachable),
        (BusyLoadingError("Redis is loading the dataset in memory"), OpFailed),
        (AuthenticationError("invalid password"), OpFailed),
        (ResponseError("OOM command not allowed when used memory > 'maxmemory'"), OpFailed),
        (ReadOnlyError("You can't write against a read only replica."), OpFailed),
        (ResponseError("BUSY Redis is busy running a script"), OpFailed),
        (DataError("Invalid input of type: 'dict'"), OpFailed),
        (LockNotOwnedError("Cannot release a lock that's no longer owned"), LeaseNotFound),
        (redis.TimeoutError("Timeout reading from 10.77.0.11:6379"), OpUnknown),
        (redis.TimeoutError("Timeout writing to socket"), OpUnknown),
        (redis.ConnectionError("Connection closed by server."), OpUnknown),
        (redis.ConnectionError("Error 32 while writing to socket. Broken pipe."), OpUnknown),
        (
            redis.ConnectionError("Error while reading from 10.77.0.11:6379 : (104, 'reset')"),
            OpUnknown,
        ),
        (LockError("Cannot extend an unlocked lock"), OpFailed),
    ],
)
def test_redis_py_errors(exc: redis.RedisError, kind: type) -> None:
    assert type(classify(exc, "op")) is kind


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_is_a_fail_and_is_not_retried() -> None:
    lock = SetNxLock([f"127.0.0.1:{free_port()}"], timeout=1, ttl=2)
    with pytest.raises(OpFailed, match="not sent"):
        lock.try_acquire("lock-0", "me")
    assert connect("127.0.0.1:1", 1).get_retry().get_retries() == 0  # type: ignore[union-attr]


# --- Redlock --------------------------------------------------------------------------------


class Fake:
    """One server whose answers are scripted: True/False, or an exception to raise."""

    def __init__(self, set_nx: object = True, extend: object = True, delete: object = True) -> None:
        self.answers = {"set_nx": set_nx, "extend": extend, "delete": delete}
        self.calls: list[str] = []

    def _answer(self, op: str) -> bool:
        self.calls.append(op)
        a = self.answers[op]
        if isinstance(a, Exception):
            raise a
        return bool(a)

    def set_nx(self, name: str, owner: str, ttl_ms: int) -> bool:
        return self._answer("set_nx")

    def extend(self, name: str, owner: str, ttl_ms: int) -> bool:
        return self._answer("extend")

    def delete(self, name: str, owner: str) -> bool:
        return self._answer("delete")

    def close(self) -> None:
        pass


LOST = OpUnknown("no answer")
DOWN = OpFailed("not sent")


def test_redlock_needs_a_majority() -> None:
    servers = [Fake(), Fake(), Fake(), Fake(False), Fake(False)]
    assert Redlock(servers, 10).acquire("l", "me")
    servers = [Fake(), Fake(), Fake(False), Fake(False), Fake(DOWN)]
    assert not Redlock(servers, 10).acquire("l", "me")
    assert all("delete" in s.calls for s in servers), "a failed attempt unlocks everywhere"


def test_redlock_validity_and_drift() -> None:
    r = Redlock([Fake()] * 5, 10)
    assert r.quorum == 3
    assert r.validity == pytest.approx(10 - (0.01 * 10 + 0.002))
    ticks = iter([0.0, 9.95])  # the attempt took longer than the validity
    slow = Redlock([Fake() for _ in range(5)], 10, monotonic=lambda: next(ticks))
    assert not slow.acquire("l", "me")


def test_redlock_lost_answers_that_could_hold_a_majority_are_unknown() -> None:
    servers = [Fake(), Fake(), Fake(LOST, delete=LOST), Fake(False), Fake(False)]
    assert not Redlock(servers, 10).acquire("l", "me")  # only 1 possibly left: not held
    servers = [
        Fake(delete=LOST),
        Fake(delete=LOST),
        Fake(LOST, delete=LOST),
        Fake(False),
        Fake(False),
    ]
    with pytest.raises(OpUnknown):
        Redlock(servers, 10).acquire("l", "me")


def test_redlock_with_no_server_reachable_is_a_fail() -> None:
    with pytest.raises(OpFailed, match="no server reachable"):
        Redlock([Fake(DOWN, delete=DOWN) for _ in range(5)], 10).acquire("l", "me")


def test_redlock_extend_and_release() -> None:
    Redlock([Fake(), Fake(), Fake(), Fake(extend=False), Fake(extend=LOST)], 10).extend("l", "me")
    with pytest.raises(LeaseNotFound):
        Redlock([Fake(extend=False)] * 3 + [Fake(), Fake(extend=LOST)], 10).extend("l", "me")
    with pytest.raises(OpUnknown):
        Redlock([Fake(extend=LOST)] * 3 + [Fake(), Fake()], 10).extend("l", "me")
    Redlock([Fake()] * 3 + [Fake(delete=False)] * 2, 10).release("l", "me")
    with pytest.raises(LeaseNotFound):
        Redlock([Fake(delete=False)] * 4 + [Fake()], 10).release("l", "me")
    with pytest.raises(OpUnknown):
        Redlock([Fake(delete=LOST)] * 3 + [Fake(delete=False)] * 2, 10).release("l", "me")
