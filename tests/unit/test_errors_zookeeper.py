"""ZooKeeper's error classification, without Docker: constructed ``kazoo`` exceptions, and
the session driver's view of a session that is gone.

Refused by the server, never sent, or a lock wait that ran out -> fail; a session-bound
operation on an expired session -> ``LeaseNotFound`` (fail); a lost connection or an
unanswered request -> info.
"""

from __future__ import annotations

import pytest
from kazoo.exceptions import (
    BadVersionError,
    CancelledError,
    ConnectionClosedError,
    ConnectionLoss,
    LockTimeout,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    OperationTimeoutError,
    SessionExpiredError,
    SystemZookeeperError,
)
from kazoo.handlers.threading import KazooTimeoutError

from clusters.zookeeper.errors import classified, classify
from clusters.zookeeper.session import ZkSession
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (NoNodeError(), OpFailed),
        (NodeExistsError(), OpFailed),
        (BadVersionError(), OpFailed),
        (NotEmptyError(), OpFailed),
        (LockTimeout("Failed to acquire lock on /l after 1 seconds"), OpFailed),
        (CancelledError(), OpFailed),
        (ConnectionClosedError("Connection has been closed"), OpFailed),
        (ConnectionLoss(), OpUnknown),
        (OperationTimeoutError(), OpUnknown),
        (KazooTimeoutError(), OpUnknown),
        (SessionExpiredError(), OpUnknown),
        (SystemZookeeperError(), OpUnknown),
    ],
)
def test_plain_operations(exc: Exception, kind: type) -> None:
    assert type(classify(exc, "op")) is kind


def test_a_timeout_while_connecting_is_a_fail() -> None:
    assert (
        type(classify(KazooTimeoutError("Connection time-out"), "start", connecting=True))
        is OpFailed
    )


def test_session_bound_operations_lose_the_lease_with_the_session() -> None:
    assert type(classify(SessionExpiredError(), "delete", session_bound=True)) is LeaseNotFound
    # a closed client never sent anything: still a plain fail, not a lost lease
    closed = ConnectionClosedError("Connection has been closed")
    assert type(classify(closed, "delete", session_bound=True)) is OpFailed


def test_classified_converts_and_keeps_other_exceptions() -> None:
    with pytest.raises(OpUnknown), classified("get /x"):
        raise ConnectionLoss()
    with pytest.raises(ValueError), classified("get /x"):
        raise ValueError("not a driver error")


def test_keepalive_without_a_live_session_is_lease_not_found() -> None:
    session = ZkSession(["127.0.0.1:1"])
    with pytest.raises(LeaseNotFound):
        session.keepalive(0x1234)
    session.revoke(0x1234)  # nothing open: a no-op
    session.close()
