"""Newline-delimited JSON over TCP: the one protocol of the ``sim`` server and the resource.

A request is one JSON object on one line, ``{"op": NAME, ...arguments}``; the answer is one
line, ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": MESSAGE}``. A connection
carries one request at a time. The server only acts on complete lines: a request cut short
by a crashed client is dropped, never half-executed. ``{"op": "ping"}`` answers ``"pong"``
on every server, which is how launchers know a server is up.

The blocking ``WireClient`` classifies every failure for the history (see
``workloads.errors``): nothing sent -> ``NotSent`` (fail), the server said no ->
``Rejected`` (fail), sent but no answer -> ``NoAnswer`` (info).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from core.writes import write_text
from workloads.errors import OpFailed, OpUnknown, Unreachable

Handler = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Serves one request: ``(op, arguments) -> result``; raises ``RequestError`` to refuse."""

MAX_LINE = 1 << 20

_ANSWER = json.JSONEncoder(separators=(",", ":"), default=str).encode
_REQUEST = json.JSONEncoder(separators=(",", ":")).encode
"""Each built once: ``json.dumps`` with arguments builds an encoder per call, and a request
and its answer are encoded once per operation."""


# --- server side -----------------------------------------------------------------------


class RequestError(Exception):
    """Raised by a handler to refuse a request; the client gets the message as a definite
    failure, so raise it only when the request certainly changed nothing."""


async def _answer(handler: Handler, line: bytes) -> dict[str, Any]:
    try:
        req = json.loads(line)
    except json.JSONDecodeError as e:
        return {"ok": False, "error": f"bad request: not JSON ({e.msg})"}
    if not isinstance(req, dict) or not isinstance(req.get("op"), str):
        return {"ok": False, "error": 'bad request: expected {"op": NAME, ...}'}
    op = req.pop("op")
    rid = req.pop("id", None)
    out: dict[str, Any]
    try:
        out = {"ok": True, "result": "pong" if op == "ping" else await handler(op, req)}
    except RequestError as e:
        out = {"ok": False, "error": str(e)}
    except Exception as e:  # a server bug: the client cannot know what happened
        out = {"ok": False, "error": f"internal error: {type(e).__name__}: {e}", "unknown": True}
    if rid is not None:
        out["id"] = rid
    return out


async def _serve_connection(
    handler: Handler, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            line = await reader.readline()
            if not line.endswith(b"\n"):
                break  # end of stream, or a request cut short: never act on it
            out = await _answer(handler, line)
            writer.write(_ANSWER(out).encode() + b"\n")
            await writer.drain()
    except (ConnectionError, ValueError):  # ValueError: a line over MAX_LINE
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def start_server(handler: Handler, host: str, port: int) -> asyncio.Server:
    """Listen on ``host:port`` (0: any free port) and serve each connection's requests in
    order, one at a time."""

    async def on_connect(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.CancelledError):  # cancelled at server shutdown
            await _serve_connection(handler, r, w)

    return await asyncio.start_server(on_connect, host, port, limit=MAX_LINE)


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line options every wire server takes."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--port-file", type=Path, help="also write the port here (atomically) once listening"
    )


async def serve_until_signalled(
    handler: Handler,
    args: argparse.Namespace,
    background: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
) -> None:
    """Run a server process's life: listen, announce the port (first line of stdout and
    ``--port-file``), run ``background`` tasks, stop cleanly on SIGTERM or SIGINT."""
    server = await start_server(handler, args.host, args.port)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    if args.port_file is not None:
        write_text(args.port_file, f"{port}\n")  # whole, never through a link
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks = [asyncio.create_task(job()) for job in background]
    try:
        await stop.wait()
    finally:
        for t in tasks:
            t.cancel()
        server.close()
        await server.wait_closed()
        sys.stdout.flush()


# --- client side -----------------------------------------------------------------------


class NotSent(Unreachable):
    """The request never reached the server (connection refused, no route): it certainly
    did not take effect."""


class Rejected(OpFailed):
    """The server answered with a refusal (``RequestError``): it certainly did not take
    effect. The message is the server's."""


class NoAnswer(OpUnknown):
    """The request was sent but no answer came (timeout, connection lost): it may have
    taken effect."""


def parse_address(address: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"address must look like 'host:port', not {address!r}")
    return host, int(port)


class WireClient:
    """A blocking client for one wire server: one connection, one request at a time,
    reconnecting as needed. Not thread-safe: give each thread its own.

    A request is two system calls, a send and a receive: the socket blocks, its waits
    bounded by the kernel (``SO_RCVTIMEO``, ``SO_SNDTIMEO``) rather than by a poll before
    each call, and a connection the server closed is told from its TCP state. Each call
    that can block lets the harness's other threads run, and with clients in threads
    (``harness.client_threads``) each such hand-over is a switch between them."""

    def __init__(self, address: str, timeout: float = 5.0, connect_timeout: float = 2.0) -> None:
        self.address = address
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._host, self._port = parse_address(address)
        self._sock: socket.socket | None = None
        self._buf = b""
        self._rcvtimeo: float | None = None  # the receive bound the socket has

    def call(self, op: str, timeout: float | None = None, **args: Any) -> Any:
        """Send one request and return its result.

        ``timeout`` (default: the client's) bounds the wait for the answer. Raises
        ``NotSent`` or ``Rejected`` (definite) or ``NoAnswer`` (unknown).
        """
        line = _REQUEST({"op": op, **args}).encode() + b"\n"
        sock = self._connected()
        try:
            sock.sendall(line)
        except OSError as e:
            # sendall raises only before the kernel took the whole line, and the server
            # ignores a line without its newline: the request cannot have been executed.
            self.close()
            raise NotSent(f"could not send to {self.address}: {e}") from None
        raw = self._read_line(self.timeout if timeout is None else timeout)
        try:
            answer = json.loads(raw)
        except json.JSONDecodeError:
            self.close()
            raise NoAnswer(f"{self.address} sent something that is not JSON") from None
        if answer.get("ok"):
            return answer.get("result")
        if answer.get("unknown"):
            raise NoAnswer(str(answer.get("error")))
        raise Rejected(str(answer.get("error")))

    def close(self) -> None:
        """Drop the connection; the next call opens a new one."""
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None
        self._buf = b""
        self._rcvtimeo = None

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connected(self) -> socket.socket:
        if self._sock is not None and _peer_closed(self._sock):
            self.close()  # the server restarted or dropped us while idle: reconnect
        if self._sock is None:
            try:
                sock = socket.create_connection(
                    (self._host, self._port), timeout=self.connect_timeout
                )
            except OSError as e:
                raise NotSent(f"cannot connect to {self.address}: {e}") from None
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(None)  # blocking; the kernel bounds each wait
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(self.timeout))
            self._sock = sock
        return self._sock

    def _read_line(self, timeout: float) -> bytes:
        assert self._sock is not None
        deadline = time.monotonic() + timeout
        bound = timeout  # the first wait is the whole timeout: the socket keeps it set
        while b"\n" not in self._buf:
            if bound <= 0:
                self.close()
                raise NoAnswer(f"no answer from {self.address} within {timeout:g} s")
            if bound != self._rcvtimeo:  # a system call only when the bound changes
                self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(bound))
                self._rcvtimeo = bound
            try:
                chunk = self._sock.recv(65536)
            except (BlockingIOError, TimeoutError):  # the wait ran out: the deadline says
                chunk = None
            except OSError as e:
                self.close()
                raise NoAnswer(f"connection to {self.address} lost after sending: {e}") from None
            if chunk == b"":
                self.close()
                raise NoAnswer(f"{self.address} closed the connection after the request was sent")
            if chunk is not None:
                self._buf += chunk
            bound = deadline - time.monotonic()
        line, _, self._buf = self._buf.partition(b"\n")
        return line


def _timeval(seconds: float) -> bytes:
    """``seconds`` as a ``struct timeval`` for ``SO_RCVTIMEO`` and ``SO_SNDTIMEO``, at
    least a microsecond (zero would mean no bound)."""
    micros = max(1, int(seconds * 1e6))
    return struct.pack("@ll", micros // 1_000_000, micros % 1_000_000)


_TCP_INFO: int | None = getattr(socket, "TCP_INFO", None)
_ESTABLISHED = 1
"""``tcpi_state`` of a connection both ends hold open (Linux's ``TCP_ESTABLISHED``)."""


def _peer_closed(sock: socket.socket) -> bool:
    """True when an idle connection has been closed (or reset) by the peer: where the
    system tells a connection's TCP state (Linux's ``TCP_INFO``, whose first byte it is),
    read from there, a call that lets no other thread in; else by a look at what it could
    read."""
    if _TCP_INFO is not None:
        try:
            return sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 1)[0] != _ESTABLISHED
        except OSError:
            return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True
