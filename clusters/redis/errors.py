"""Redis's error classification: every ``redis-py`` exception becomes fail or info.

==========================================================  =================  =========
what ``redis-py`` raised                                     raised             completes
==========================================================  =================  =========
``ConnectionError`` "Error N connecting to ...",             ``Unreachable``    fail
``TimeoutError`` "Timeout connecting to server": the
command never left
``BusyLoadingError`` (loading the dataset),                  ``OpFailed``       fail
``AuthenticationError``: refused at the door
``ResponseError`` (``OOM``, ``READONLY``, ``BUSY``,          ``OpFailed``       fail
``NOSCRIPT``, ``MISCONF``...): the server refused the
command without running it
``DataError``, ``LockError``: refused by the client          ``OpFailed``       fail
before sending
``LockNotOwnedError``: the lock key no longer holds our      ``LeaseNotFound``  fail
value
``TimeoutError`` reading or writing, any other               ``OpUnknown``      info
``ConnectionError`` (closed by server, reset, broken pipe),
any other ``RedisError``
==========================================================  =================  =========

The clients run without ``redis-py``'s automatic retries (``no_retries``): a retried
``SET NX`` whose first answer was lost would find its own key and report "not acquired".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    DataError,
    LockError,
    LockNotOwnedError,
    RedisError,
    ResponseError,
)

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown, Unreachable

NOT_SENT = ("connecting to", "Timeout connecting")
"""Message fragments of redis-py's connection-establishment errors."""


def classify(e: RedisError, what: str) -> OpFailed | OpUnknown:
    """The outcome class of ``e``, raised while doing ``what``."""
    text = f"{what}: {type(e).__name__}: {e}"
    if isinstance(e, LockNotOwnedError):
        return LeaseNotFound(text)
    if isinstance(
        e, BusyLoadingError | AuthenticationError | ResponseError | DataError | LockError
    ):
        return OpFailed(text)
    if isinstance(e, redis.ConnectionError | redis.TimeoutError) and any(
        m in str(e) for m in NOT_SENT
    ):
        return Unreachable(f"{text} (not sent)")
    return OpUnknown(text)


@contextmanager
def classified(what: str) -> Iterator[None]:
    """Turn any ``RedisError`` raised inside into ``OpFailed``/``OpUnknown``."""
    try:
        yield
    except RedisError as e:
        raise classify(e, what) from None
