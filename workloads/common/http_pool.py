"""Keep-alive HTTP/1.1 connections of one client, on the standard library's ``http.client``.

The targets that speak plain HTTP (etcd's JSON gateway, Consul's API) send every request
of a client over one kept-alive connection: ``requests`` cost about 1.3 ms of CPU per call
here, four times the exchange itself, and was the runner's bottleneck against etcd (issue
36). A client is used by its worker's main thread and, at times, by a lease keeper or a
watch thread: each request takes an idle connection (or opens one) and gives it back
when its answer has been read whole, so threads never share one, and a client that makes
one request at a time keeps exactly one.

A failure is classified by the stage it happened in (``workloads.http_errors``): while
connecting, nothing was sent; after, the outcome is unknown. An idle connection the
server closed meanwhile is noticed before reuse and replaced; one that failed in any way
is closed, never reused. Timeouts are as ``requests`` had them: ``connect_timeout`` to
connect, then ``timeout`` for each wait on the socket.
"""

from __future__ import annotations

import json
import select
import time
from collections.abc import Iterator, Mapping
from email.message import Message
from http.client import HTTPConnection, HTTPException, HTTPResponse
from typing import Any, NamedTuple

from workloads.common.wire import parse_address
from workloads.errors import OpUnknown
from workloads.http_errors import transport_error

CONNECT_TIMEOUT = 2.0
"""Seconds to establish a connection: a refused or unreachable server fails fast (fail)."""


class Request(NamedTuple):
    """What to ask: the method, the target (path and query), the body and headers."""

    method: str
    target: str
    body: bytes | None = None
    headers: Mapping[str, str] = {}


class Answer:
    """A whole answer: its status, headers and body."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: Message, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The decoded JSON body (``ValueError`` when it is not JSON)."""
        return json.loads(self.body)


class HttpPool:
    """The idle kept-alive connections of one client, to whichever server it asks."""

    def __init__(self, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.connect_timeout = connect_timeout
        self._idle: list[HTTPConnection] = []

    def request(self, address: str, request: Request, what: str, timeout: float) -> Answer:
        """One exchange with ``address`` ("host:port"), each wait on it at most
        ``timeout`` seconds: the whole answer, whatever its status; ``Unreachable`` if it
        could not connect, ``OpUnknown`` if the exchange failed after that."""
        conn = self._take(address, timeout, what)
        resp = _send(conn, request, what, timeout)
        try:
            data = resp.read()
        except (OSError, HTTPException) as e:
            conn.close()
            raise transport_error(e, what, sent=True) from None
        if conn.sock is not None:  # http.client closed it if the server said it would
            self._idle.append(conn)
        return Answer(resp.status, resp.headers, data)

    def stream(self, address: str, request: Request, what: str, timeout: float) -> Stream:
        """An exchange whose answer streams, on a connection of its own (never kept: the
        server is still sending when the caller stops reading), its head awaited at most
        ``timeout`` seconds; the caller closes it and bounds its reads (``Stream.lines``)."""
        conn = self._connect(address, timeout, what)
        return Stream(conn, _send(conn, request, what, timeout), what)

    def close(self) -> None:
        """Close every idle connection (one in use is closed by its request's end)."""
        while self._idle:
            try:
                self._idle.pop().close()
            except IndexError:  # another thread took the last one
                return

    def _take(self, address: str, timeout: float, what: str) -> HTTPConnection:
        """An idle connection to ``address`` still open at the server's end, else a new
        one; the idle connections to other servers closed on the way."""
        host, port = parse_address(address)
        while self._idle:
            try:
                conn = self._idle.pop()
            except IndexError:
                break
            if conn.host == host and conn.port == port and _still_open(conn):
                return conn
            conn.close()
        return self._connect(address, timeout, what)

    def _connect(self, address: str, timeout: float, what: str) -> HTTPConnection:
        host, port = parse_address(address)
        conn = HTTPConnection(host, port, timeout=min(self.connect_timeout, timeout))
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            raise transport_error(e, what, sent=False) from None
        return conn


class Stream:
    """A streaming answer on a connection of its own: its status, and its lines as they
    arrive."""

    def __init__(self, conn: HTTPConnection, resp: HTTPResponse, what: str) -> None:
        self.status = resp.status
        self._conn = conn
        self._sock = conn.sock  # kept: http.client lets go of it if the server will close
        self._resp = resp
        self._what = what

    def lines(self, deadline: float) -> Iterator[bytes]:
        """Each whole line as it arrives, until the answer ends or the ``time.monotonic``
        ``deadline`` passes; ``OpUnknown`` if the connection breaks."""
        buffer = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                if self._sock is not None:
                    self._sock.settimeout(left)
                chunk = self._resp.read1(65536)
            except TimeoutError:
                return
            except (OSError, HTTPException, ValueError) as e:
                raise OpUnknown(f"{self._what}: stream broken ({e})") from None
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                yield line

    def close(self) -> None:
        self._resp.close()
        self._conn.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _send(conn: HTTPConnection, request: Request, what: str, timeout: float) -> HTTPResponse:
    """Send ``request`` on ``conn`` and read the answer's head, each wait at most
    ``timeout`` seconds; ``OpUnknown`` (the connection closed) if that fails."""
    try:
        if conn.sock is not None:
            conn.sock.settimeout(max(timeout, 0.001))
        conn.request(request.method, request.target, request.body, dict(request.headers))
        return conn.getresponse()
    except (OSError, HTTPException) as e:
        conn.close()
        raise transport_error(e, what, sent=True) from None


def _still_open(conn: HTTPConnection) -> bool:
    """Whether an idle connection is still open at the server's end: an idle socket
    that reads as ready holds the server's close (or bytes nobody asked for)."""
    sock = conn.sock
    if sock is None:
        return False
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return not poller.poll(0)
