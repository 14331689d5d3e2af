"""The kept-alive HTTP connections of etcd's and Consul's clients (``workloads.common.
http_pool``) against a loopback HTTP/1.1 server: one connection for a client's requests,
a connection the server closed while idle replaced rather than taken for a lost answer,
a server gone since the last request refused as never sent (fail), and streamed lines.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from clusters.consul.api import ConsulConnection
from clusters.etcd.gateway import EtcdConnection
from workloads.common.http_pool import HttpPool, Request
from workloads.errors import OpUnknown, Unreachable


class _KeepAlive(BaseHTTPRequestHandler):
    """Answers every request with ``{}`` over HTTP/1.1, keeping the connection open unless
    the server is told to drop each one after its answer (without saying so); a POST to
    ``/stream`` answers three chunked lines, then waits."""

    protocol_version = "HTTP/1.1"
    server: Server

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/stream":
            self._stream()
            return
        self.server.paths.append(self.path)
        data = self.server.body
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Consul-Index", "7")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        if self.server.drop_after_answer:
            self.close_connection = True

    do_GET = do_PUT = do_POST

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for n in range(3):
            line = b'{"result": {"n": %d}}\n' % n
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        self.server.done.wait(5)
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


class Server(ThreadingHTTPServer):
    """A loopback HTTP/1.1 server counting the connections it accepted."""

    daemon_threads = True

    def __init__(
        self, drop_after_answer: bool = False, body: bytes = b'{"header": {}, "kvs": []}'
    ) -> None:
        self.drop_after_answer = drop_after_answer
        self.body = body
        self.paths: list[str] = []
        self.accepted: list[socket.socket] = []
        self.done = threading.Event()
        super().__init__(("127.0.0.1", 0), _KeepAlive)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def get_request(self) -> Any:
        sock, address = super().get_request()
        self.accepted.append(sock)
        return sock, address

    @property
    def connections(self) -> int:
        return len(self.accepted)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        """Stop as a killed process does: every connection closed with the listener."""
        self.done.set()
        self.shutdown()
        self.server_close()
        for sock in self.accepted:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.stop()


def test_a_clients_requests_share_one_kept_alive_connection(server: Server) -> None:
    conn = EtcdConnection([server.address])
    for _ in range(20):
        conn.get("k")
    conn.close()
    assert server.connections == 1


def test_a_consul_clients_requests_share_one_connection_and_carry_their_query() -> None:
    server = Server(body=b'[{"Key": "k", "Value": "MQ==", "ModifyIndex": 7}]')
    try:
        conn = ConsulConnection([server.address])
        for _ in range(5):
            assert conn.entry("run 1/k") == ({"Key": "k", "Value": "MQ==", "ModifyIndex": 7}, 7)
        conn.close()
        assert server.connections == 1
        assert server.paths[0] == "/v1/kv/run%201/k?consistent="
    finally:
        server.stop()


def test_a_connection_the_server_closed_while_idle_is_replaced_not_an_unknown() -> None:
    """Without the check before reuse, the second request goes out on a closed
    connection and ends as an unknown outcome (info) though the server was fine."""
    server = Server(drop_after_answer=True)
    try:
        conn = EtcdConnection([server.address])
        for _ in range(5):
            conn.get("k")
            time.sleep(0.05)  # the server's close reaches the idle connection
        assert server.connections == 5
    finally:
        server.stop()


def test_a_server_gone_since_the_last_request_is_a_fail_not_sent() -> None:
    """A member killed between two requests: the next one is refused before anything is
    sent (fail), as with a new connection, not recorded as a lost answer (info)."""
    server = Server()
    conn = EtcdConnection([server.address])
    conn.get("k")
    server.stop()
    time.sleep(0.05)
    with pytest.raises(Unreachable, match="not sent"):
        conn.get("k")


def test_threads_asking_at_once_each_get_a_connection_and_give_it_back(server: Server) -> None:
    pool = HttpPool()
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for _ in range(10):
                assert pool.request(server.address, Request("POST", "/"), "ask", 2).status == 200
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert server.connections <= 4
    pool.close()


def test_a_stream_yields_its_lines_and_stops_at_its_deadline(server: Server) -> None:
    conn = EtcdConnection([server.address])
    start = time.monotonic()
    got = list(conn.stream("/stream", {}, "watch", timeout=0.5))
    assert got == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert 0.4 < time.monotonic() - start < 3


def test_a_stream_of_a_server_that_hangs_up_mid_chunk_is_broken() -> None:
    class _Cut(_KeepAlive):
        def _stream(self) -> None:
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b'40\r\n{"result"')
            self.wfile.flush()
            self.close_connection = True

    server = Server()
    server.RequestHandlerClass = _Cut
    try:
        with pytest.raises(OpUnknown, match="stream broken"):
            list(EtcdConnection([server.address]).stream("/stream", {}, "watch", timeout=2))
    finally:
        server.stop()
