"""PostgreSQL's error classification: every ``psycopg`` exception becomes fail or info.

=============================================================  ===============  =========
what ``psycopg`` raised                                         raised           completes
=============================================================  ===============  =========
any error while connecting (refused, no route, connect          ``Unreachable``  fail
timeout, the server starting up or shutting down): nothing
was sent
``LockNotAvailable`` (55P03, ``lock_timeout``): the lock was    ``OpFailed``     fail
not granted and the transaction is rolled back
``IntegrityError`` (unique, foreign key, check),                ``OpFailed``     fail
``SerializationFailure``, ``DeadlockDetected``,
``ReadOnlySqlTransaction`` (a replica), ``ProgrammingError``,
``DataError``: the server refused the statement, and its
transaction is rolled back
``IdleSessionTimeout`` (57P05),                                 ``LeaseNotFound``  fail
``IdleInTransactionSessionTimeout`` (25P03): the server ended
the session, and every lock it held with it
the connection lost, the server's answer not in time (or one    ``OpFailed``     fail
that came as the deadline cut the socket) (``OperationalError``,
``AdminShutdown``...), any other ``psycopg.Error`` *before*
COMMIT: the transaction dies with its connection, nothing of
it was committed
the same *during* COMMIT (or an autocommit write): it may       ``OpUnknown``    info
have committed before the answer was lost
=============================================================  ===============  =========

The last two rows are PostgreSQL's rule that a transaction commits only at COMMIT: a
connection lost before it rolls the transaction back (the server sees the socket close and
aborts), one lost while COMMIT is under way leaves the outcome unknown. The caller says
which of the two it is in (``committing``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors as pg

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown, Unreachable

REFUSED = (
    psycopg.IntegrityError,
    psycopg.ProgrammingError,
    psycopg.DataError,
    pg.LockNotAvailable,
    pg.SerializationFailure,
    pg.DeadlockDetected,
    pg.ReadOnlySqlTransaction,
)
"""The server answered with a refusal: the statement (and its transaction) did nothing."""
SESSION_ENDED = ("57P05", "25P03")
"""The server's idle timeouts ended the session (and its locks, its transaction)."""


class Refused(OpFailed):
    """The server refused the statement; ``sqlstate`` says why (``23505``: a unique key)."""

    def __init__(self, text: str, sqlstate: str | None) -> None:
        super().__init__(text)
        self.sqlstate = sqlstate


UNIQUE_VIOLATION = "23505"
LOCK_NOT_AVAILABLE = "55P03"
"""``lock_timeout`` ran out while another session held the lock."""


def classify(e: psycopg.Error, what: str, committing: bool) -> OpFailed | OpUnknown:
    """The outcome class of ``e``, raised while doing ``what``; ``committing``: whether a
    COMMIT (or an autocommit write) was under way."""
    state = f" [{e.sqlstate}]" if e.sqlstate else ""
    text = f"{what}: {type(e).__name__}{state}: {str(e).strip().splitlines()[0] if str(e) else ''}"
    if e.sqlstate in SESSION_ENDED:
        return LeaseNotFound(text)
    if isinstance(e, REFUSED):
        return Refused(text, e.sqlstate)
    if committing:
        return OpUnknown(text)
    return OpFailed(f"{text} (before commit: rolled back)")


@contextmanager
def classified(what: str, committing: bool = False) -> Iterator[None]:
    """Turn any ``psycopg.Error`` raised inside into ``OpFailed``/``OpUnknown``."""
    try:
        yield
    except psycopg.Error as e:
        raise classify(e, what, committing) from None


@contextmanager
def connecting(where: str) -> Iterator[None]:
    """Turn any error of opening a connection into ``Unreachable`` (nothing was sent)."""
    try:
        yield
    except psycopg.Error as e:
        first = str(e).strip().splitlines()[0] if str(e) else type(e).__name__
        raise Unreachable(f"connect to {where}: {first} (not sent)") from None
