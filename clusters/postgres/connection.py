"""One ``psycopg`` connection to the PostgreSQL primary, set up for testing.

The connection string names every node and asks for a read-write session
(``target_session_attrs``), so a client finds the primary wherever it is. libpq has no
timeout for an answer: a paused or cut-off server would hold a client for ever. Every
statement therefore runs under a ``Deadline`` that shuts the connection's socket when the
answer is late; the waiting call then fails as a lost connection does, and
``clusters.postgres.errors`` classifies it by whether a COMMIT was under way. An answer
that arrives as the socket is cut counts as lost too: the server ends the session when it
reads the cut, and with it the session's locks and open transaction, so that answer is
not what holds.
"""

from __future__ import annotations

import math
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from clusters.postgres.errors import classified, connecting

USER = "postgres"
DATABASE = "postgres"
MIN_CONNECT_TIMEOUT = 2
"""libpq's smallest connect timeout, in whole seconds."""


def conninfo(addresses: Sequence[str], timeout: float, *, primary: bool = True) -> str:
    """The libpq connection string of ``addresses`` ("ip:port"): the primary among them
    (``primary``), else the first that answers."""
    hosts = [a.rpartition(":") for a in addresses]
    return make_conninfo(
        host=",".join(h for h, _, _ in hosts),
        port=",".join(p for _, _, p in hosts),
        user=USER,
        dbname=DATABASE,
        connect_timeout=str(max(MIN_CONNECT_TIMEOUT, math.ceil(timeout))),
        target_session_attrs="read-write" if primary else "any",
        application_name="harness",
    )


class Deadline:
    """Cuts ``conn``'s socket if the block it guards has not ended ``timeout`` s after it
    began (``fired`` then says so). ``finish`` ends the guard: after it, the socket is
    never cut."""

    def __init__(self, conn: psycopg.Connection[Any], timeout: float) -> None:
        self.conn, self.timeout, self.fired = conn, timeout, False
        self._timer = threading.Timer(timeout, self._cut)
        self._timer.daemon = True
        self._guard = threading.Lock()
        self._done = False

    def finish(self) -> bool:
        """End the guard; whether the socket was cut meanwhile."""
        with self._guard:
            self._done = True
        self._timer.cancel()
        return self.fired

    def _cut(self) -> None:
        with self._guard:
            if self._done:
                return
            self.fired = True
            self._shutdown()

    def _shutdown(self) -> None:
        try:
            fd = self.conn.pgconn.socket
        except psycopg.Error:
            return
        try:
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()


class Connection:
    """A connection to the primary (or, ``primary=False``, to the first node answering),
    autocommit, every statement bounded by ``timeout`` s. With ``reopen``, a statement
    after the connection was lost opens a new one (not for a session that is itself a
    lease: its loss must show)."""

    def __init__(
        self, addresses: Sequence[str], timeout: float, *, primary: bool = True, reopen: bool = True
    ) -> None:
        self.where = ",".join(addresses)
        self.timeout, self.reopen = timeout, reopen
        self._info = conninfo(addresses, timeout, primary=primary)
        self.conn = self._open()
        self.lock = threading.Lock()

    def _open(self) -> psycopg.Connection[Any]:
        with connecting(self.where):
            return psycopg.connect(self._info, autocommit=True)

    @property
    def host(self) -> str:
        """The address of the server this connection reached."""
        return f"{self.conn.info.host}:{self.conn.info.port}"

    @contextmanager
    def bounded(
        self, what: str, committing: bool = False, timeout: float | None = None
    ) -> Iterator[psycopg.Connection[Any]]:
        """The raw connection for one exchange of ``what``, bounded by ``timeout`` (None:
        the connection's) and classified (``committing``: a COMMIT or an autocommit write
        is under way)."""
        limit = self.timeout if timeout is None else timeout
        if self.reopen and self.conn.closed:
            self.conn = self._open()
        with self.lock, Deadline(self.conn, limit) as deadline:
            try:
                with classified(f"{what} on {self.host}", committing):
                    yield self.conn
                    if deadline.finish():  # the answer came as the socket was cut
                        self.conn.close()
                        raise psycopg.OperationalError(
                            "an answer came only as the deadline cut the socket"
                        )
            except Exception as e:
                if deadline.fired:
                    e.args = (f"{e.args[0] if e.args else e} (no answer in {limit:g} s)",)
                raise

    def query(
        self,
        what: str,
        sql: str,
        params: Sequence[Any] = (),
        *,
        write: bool = False,
        timeout: float | None = None,
    ) -> list[tuple[Any, ...]]:
        """The rows of one statement (``write``: it may commit a change, so a lost answer
        leaves it unknown), answered within ``timeout`` s (None: the connection's)."""
        with self.bounded(what, committing=write, timeout=timeout) as conn:
            cur = conn.execute(sql, params)
            return list(cur.fetchall()) if cur.description is not None else []

    def close(self) -> None:
        try:
            self.conn.close()
        except psycopg.Error:
            pass


def probe(ip: str, port: int, sql: str, timeout: float = 1.5) -> Any | None:
    """The first column of the first row of ``sql`` on the server at ``ip``, or None when
    it does not answer in time (starting, paused, cut off) or fails."""
    try:
        conn = Connection([f"{ip}:{port}"], timeout, primary=False)
    except Exception:
        return None
    try:
        rows = conn.query("probe", sql)
        return rows[0][0] if rows else None
    except Exception:
        return None
    finally:
        conn.close()
