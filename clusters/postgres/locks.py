"""The three locks in the database, each with fencing tokens from ``harness_tokens``.

``table`` (``TableLock``, a ``workloads.lock.ttl.TtlLockBackend``): the lock table of the
domain notes. A row per held lock (name, owner, expiry, token); acquire inserts the row or
takes over an expired one in one statement, extend moves the expiry of a row still ours
and unexpired, release deletes it. The expiry is the server's ``now()`` plus the TTL: the
lock is its own lease, certainly held for the TTL after the winning statement left.

``advisory`` and ``row`` (``SessionLock`` backends): locks that live as long as the session
holding them. ``pg_advisory_lock`` is a session lock; ``SELECT ... FOR UPDATE`` holds the
row until its transaction ends (the release's COMMIT). A session whose client stops
talking must still lose its lock, or a frozen holder would hold it for ever: the server's
idle timeouts end it (``idle_session_timeout`` for the advisory lock,
``idle_in_transaction_session_timeout`` for the row), set to the lease TTL, and the keeper
thread's ``SELECT 1`` on the same session every keepalive resets them. The lock is lost
with the session, exactly as a lease expires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.refusals import NOT_GRANTED
from clusters.postgres.connection import Connection
from clusters.postgres.errors import LOCK_NOT_AVAILABLE, Refused
from clusters.postgres.schema import ready
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed


def _not_granted(e: OpFailed) -> OpFailed:
    """A failed lock wait as the history records it: ``not granted`` (a designed refusal,
    ``checkers.refusals``) only when the server said the lock was held until
    ``lock_timeout`` ran out (``LockNotAvailable``); any other failure (the server
    unreachable, the connection lost) keeps its own words."""
    if isinstance(e, Refused) and e.sqlstate == LOCK_NOT_AVAILABLE:
        return OpFailed(f"{NOT_GRANTED}: {e}")
    return e


def ms(seconds: float) -> int:
    """``seconds`` as PostgreSQL's millisecond settings take them (at least 1)."""
    return max(1, round(seconds * 1000))


class LockDriver:
    """What every lock driver here takes (``workloads.common.factories``' driver options): the
    nodes, the answer timeout, the run's key prefix and the lease TTL."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        ttl: float = 10.0,
    ) -> None:
        self.addresses, self.timeout, self.prefix, self.ttl = addresses, timeout, prefix, ttl

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}"


class TableLock(LockDriver):
    """The lock table (see the module docstring); ``granted_token`` is the token of the
    last successful ``try_acquire``."""

    def __init__(self, addresses: Sequence[str], **options: Any) -> None:
        super().__init__(addresses, **options)
        self.conn = ready(Connection(addresses, self.timeout))
        self.granted_token: int | None = None

    @property
    def validity(self) -> float:
        return self.ttl

    def try_acquire(self, name: str, owner: str) -> bool:
        rows = self.conn.query(
            f"acquire {name}",
            "INSERT INTO harness_locks AS l (name, owner, expires, token) "
            "VALUES (%s, %s, now() + make_interval(secs => %s), nextval('harness_tokens')) "
            "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
            "expires = excluded.expires, token = excluded.token WHERE l.expires < now() "
            "RETURNING token",
            (self._key(name), owner, self.ttl),
            write=True,
        )
        self.granted_token = int(rows[0][0]) if rows else None
        return bool(rows)

    def extend(self, name: str, owner: str) -> None:
        rows = self.conn.query(
            f"extend {name}",
            "UPDATE harness_locks SET expires = now() + make_interval(secs => %s) "
            "WHERE name = %s AND owner = %s AND expires >= now() RETURNING token",
            (self.ttl, self._key(name), owner),
            write=True,
        )
        if not rows:
            raise LeaseNotFound(f"extend {name}: the row is no longer ours or has expired")

    def release(self, name: str, owner: str) -> None:
        rows = self.conn.query(
            f"release {name}",
            "DELETE FROM harness_locks WHERE name = %s AND owner = %s RETURNING token",
            (self._key(name), owner),
            write=True,
        )
        if not rows:
            raise LeaseNotFound(f"release {name}: the row was no longer ours")

    def close(self) -> None:
        self.conn.close()


class SessionLock(LockDriver):
    """What the advisory and row locks share: one session, reopened when lost, whose idle
    timeout is the lease."""

    _conn: Connection | None = None

    def conn(self) -> Connection:
        """The session, opened when there is none alive."""
        if self._conn is None or self._conn.conn.closed:
            self._conn = ready(Connection(self.addresses, self.timeout, reopen=False))
        return self._conn

    @property
    def session(self) -> int:
        """The server process id of the session: the lease's id."""
        return int(self.conn().conn.info.backend_pid)

    def acquire(self, name: str, wait: float) -> int:
        """Take ``name``, waiting up to ``wait`` s; its token. OpFailed ``not granted``.
        A session the server ended since its last use (an idle timeout that was not yet
        read) is replaced once."""
        try:
            return self._acquire(self.conn(), name, wait)
        except LeaseNotFound:
            self.close()
            self._conn = None
            return self._acquire(self.conn(), name, wait)

    def _acquire(self, conn: Connection, name: str, wait: float) -> int:
        raise NotImplementedError

    def ping(self) -> None:
        """Keep the session from its idle timeout; LeaseNotFound once it is gone."""
        conn = self.conn() if self._conn is None else self._conn
        if conn.conn.closed:
            raise LeaseNotFound("the session holding the lock is gone")
        try:
            conn.query("keepalive", "SELECT 1")
        except OpFailed as e:
            if conn.conn.closed and not isinstance(e, LeaseNotFound):
                raise LeaseNotFound(f"the session holding the lock is gone: {e}") from None
            raise

    def release(self, name: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class AdvisoryLock(SessionLock):
    """``pg_advisory_lock`` on the session; lost with it (``idle_session_timeout``, set
    while the lock is held: a session waiting its turn is idle too)."""

    def _acquire(self, conn: Connection, name: str, wait: float) -> int:
        conn.query("lock timeout", f"SET lock_timeout = {ms(wait)}")
        try:
            rows = conn.query(
                f"acquire {name}",
                "SELECT pg_advisory_lock(hashtext(%s)), nextval('harness_tokens'), "
                "set_config('idle_session_timeout', %s, false)",
                (self._key(name), str(ms(self.ttl))),
                write=True,
                timeout=wait + self.timeout,
            )
        except Refused as e:
            raise _not_granted(e) from None
        return int(rows[0][1])

    def release(self, name: str) -> None:
        conn = self.conn()
        rows = conn.query(
            f"release {name}",
            "SELECT pg_advisory_unlock(hashtext(%s)), "
            "set_config('idle_session_timeout', '0', false)",
            (self._key(name),),
            write=True,  # the unlock is done when it runs: a lost answer leaves it unknown
        )
        if not rows or not rows[0][0]:
            raise LeaseNotFound(f"release {name}: this session no longer held it")


class RowLock(SessionLock):
    """``SELECT ... FOR UPDATE`` in a transaction open for the critical section; lost with
    the session (``idle_in_transaction_session_timeout``); released by COMMIT."""

    def _acquire(self, conn: Connection, name: str, wait: float) -> int:
        key = self._key(name)
        conn.query("set the lease", f"SET idle_in_transaction_session_timeout = {ms(self.ttl)}")
        conn.query(
            "create the row",
            "INSERT INTO harness_rows (name) VALUES (%s) ON CONFLICT DO NOTHING",
            (key,),
            write=True,
        )
        conn.query("begin", "BEGIN")
        try:
            conn.query("lock timeout", f"SET LOCAL lock_timeout = {ms(wait)}")
            conn.query(
                f"lock {name}",
                "SELECT name FROM harness_rows WHERE name = %s FOR UPDATE",
                (key,),
                timeout=wait + self.timeout,
            )
            rows = conn.query(
                f"token of {name}",
                "UPDATE harness_rows SET token = nextval('harness_tokens') WHERE name = %s "
                "RETURNING token",
                (key,),
            )
        except OpFailed as e:
            self._rollback(conn)
            raise _not_granted(e) from None
        return int(rows[0][0])

    @staticmethod
    def _rollback(conn: Connection) -> None:
        try:
            conn.query("rollback", "ROLLBACK")
        except OpFailed:
            pass

    def release(self, name: str) -> None:
        conn = self.conn() if self._conn is None else self._conn
        if conn.conn.closed:
            raise LeaseNotFound(f"release {name}: the session holding the row is gone")
        conn.query(f"release {name}", "COMMIT", write=True)
