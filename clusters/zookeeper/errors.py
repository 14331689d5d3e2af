"""ZooKeeper's error classification: every ``kazoo`` exception becomes fail or info.

=========================================================  =================  =========
what ``kazoo`` raised                                       raised             completes
=========================================================  =================  =========
``ConnectionClosedError``: the client was closed, the       ``OpFailed``       fail
request never left
``KazooTimeoutError`` while connecting (``start``)          ``OpFailed``       fail
``NoNodeError``, ``NodeExistsError``, ``BadVersionError``,  ``OpFailed``       fail
``NotEmptyError``, ``NoAuthError``, ``BadArgumentsError``,
``InvalidACLError``, ``NoChildrenForEphemeralsError``,
``AuthFailedError``, ``QuotaExceededError``,
``ThrottledOpError``: the server refused the request
``LockTimeout``, ``CancelledError``: a lock wait ran out    ``OpFailed``       fail
(kazoo removed its node)
``SessionExpiredError`` on a session-bound operation        ``LeaseNotFound``  fail
(keepalive, lock release: the session and its ephemeral
nodes are gone)
``SessionExpiredError`` otherwise, ``ConnectionLoss``,      ``OpUnknown``      info
``OperationTimeoutError``, ``KazooTimeoutError`` waiting
for an answer, any other ``ZookeeperError`` or
``KazooException``
=========================================================  =================  =========
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kazoo.exceptions import (
    AuthFailedError,
    BadArgumentsError,
    BadVersionError,
    CancelledError,
    ConnectionClosedError,
    InvalidACLError,
    KazooException,
    LockTimeout,
    NoAuthError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    QuotaExceededError,
    SessionExpiredError,
    ThrottledOpError,
)
from kazoo.handlers.threading import KazooTimeoutError

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

REFUSALS = (
    NoNodeError,
    NodeExistsError,
    BadVersionError,
    NotEmptyError,
    NoAuthError,
    BadArgumentsError,
    InvalidACLError,
    NoChildrenForEphemeralsError,
    AuthFailedError,
    QuotaExceededError,
    ThrottledOpError,
)
"""Answers of a server that refused the request without applying it."""


def classify(
    e: Exception, what: str, *, connecting: bool = False, session_bound: bool = False
) -> OpFailed | OpUnknown:
    """The outcome class of ``e`` raised while doing ``what``. ``connecting``: while
    establishing a session (nothing of the operation left yet); ``session_bound``: an
    operation that only means something on its own session (a lost session is then a lost
    lease)."""
    text = f"{what}: {type(e).__name__}" + (f": {e}" if str(e) else "")
    if isinstance(e, ConnectionClosedError):
        return OpFailed(f"{text} (not sent: the client was closed)")
    if isinstance(e, KazooTimeoutError):
        return OpFailed(f"{text} (not sent)") if connecting else OpUnknown(text)
    if isinstance(e, (*REFUSALS, LockTimeout, CancelledError)):
        return OpFailed(text)
    if isinstance(e, SessionExpiredError) and session_bound:
        return LeaseNotFound(text)
    return OpUnknown(text)


@contextmanager
def classified(
    what: str, *, connecting: bool = False, session_bound: bool = False
) -> Iterator[None]:
    """Turn any ``kazoo`` exception raised inside into ``OpFailed``/``OpUnknown``."""
    try:
        yield
    except (KazooException, KazooTimeoutError) as e:
        raise classify(e, what, connecting=connecting, session_bound=session_bound) from None
