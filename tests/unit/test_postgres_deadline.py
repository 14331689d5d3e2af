"""A PostgreSQL statement's deadline (``clusters.postgres.connection``): a statement whose
answer arrives as the deadline cuts the socket is not ok. The server ends the session when
it reads the cut, and the session's locks and open transaction with it: a lock granted by
that answer was already let go (the harness's doing, not the service's), so the statement
fails before a commit and is unknown during one, as a lost answer is.

The connection here is a stand-in holding one end of a real socket pair (what the deadline
cuts); the other end plays the server, which reads the cut.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from clusters.postgres.connection import Connection
from workloads.errors import OpFailed, OpUnknown


class _Raw:
    """The parts of a psycopg connection that ``Connection.bounded`` uses."""

    def __init__(self, sock: socket.socket) -> None:
        self.pgconn = type("PgConn", (), {"socket": sock.fileno()})()
        self.info = type("Info", (), {"host": "127.0.0.1", "port": 5432})()
        self.closed = False

    def close(self) -> None:
        self.closed = True


def _connection(client: socket.socket, timeout: float) -> Any:
    conn: Any = Connection.__new__(Connection)
    conn.where, conn.timeout, conn.reopen = "127.0.0.1:5432", timeout, False
    conn.lock = threading.Lock()
    conn.conn = _Raw(client)
    return conn


@pytest.fixture
def pair() -> Any:
    client, server = socket.socketpair()
    yield client, server
    client.close()
    server.close()


def test_an_answer_in_time_is_the_outcome_and_the_session_lives(pair: Any) -> None:
    client, server = pair
    conn = _connection(client, timeout=5.0)
    with conn.bounded("acquire"):
        pass
    assert not conn.conn.closed
    client.sendall(b"x")
    assert server.recv(1) == b"x"


@pytest.mark.parametrize(("committing", "outcome"), [(False, OpFailed), (True, OpUnknown)])
def test_an_answer_that_came_as_the_deadline_cut_the_socket_is_not_ok(
    pair: Any, committing: bool, outcome: type[Exception]
) -> None:
    client, server = pair
    conn = _connection(client, timeout=0.05)
    with pytest.raises(outcome, match="cut"), conn.bounded("acquire 1", committing=committing):
        time.sleep(0.3)  # a client frozen past the deadline; its answer then read
    assert conn.conn.closed
    server.settimeout(1.0)
    assert server.recv(1) == b""  # the server reads the cut: it ends the session
