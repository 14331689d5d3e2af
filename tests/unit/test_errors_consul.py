"""Consul's error classification, without Docker: its HTTP error answers, and the driver
against loopback servers answering like a Consul agent.

Never sent or refused -> fail (``LeaseNotFound`` when the session is gone); sent and
unanswered, or possibly committed -> info. (Transport errors are ``workloads.http_errors``,
tested with etcd's.)
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from clusters.consul.api import ConsulConnection
from clusters.consul.errors import answer_error
from clusters.consul.lock import ConsulLock
from clusters.consul.register import ConsulRegister
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (404, "Session id '0000' not found", LeaseNotFound),
        (500, 'rpc error making call: invalid session "0000"', LeaseNotFound),
        (400, "Request decode failed: bad TTL", OpFailed),
        (403, "Permission denied", OpFailed),
        (429, "rate limit exceeded", OpFailed),
        (413, "Request body too large", OpFailed),
        (404, "no such key", OpFailed),
        (500, "rpc error making call: No cluster leader", OpFailed),
        (500, "rpc error making call: Permission denied", OpFailed),
        (500, "leadership lost while committing log", OpUnknown),
        (500, "rpc error making call: EOF", OpUnknown),
        (500, "rpc error making call: i/o timeout", OpUnknown),
        (503, "", OpUnknown),
    ],
)
def test_answers(status: int, text: str, kind: type) -> None:
    assert type(answer_error(status, text, "op")) is kind


class Agent(ThreadingHTTPServer):
    """Answers every PUT with a fixed status and body, every GET with ``get``."""

    daemon_threads = True

    def __init__(self, status: int, body: str, get: tuple[int, str] = (404, "")) -> None:
        self.status, self.body, self.get = status, body, get
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Agent

    def _answer(self, status: int, body: str) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Consul-Index", "42")
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self) -> None:
        self._answer(self.server.status, self.server.body)

    def do_GET(self) -> None:
        self._answer(*self.server.get)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def agent() -> Iterator[Any]:
    servers: list[Agent] = []

    def make(status: int, body: str) -> Agent:
        servers.append(Agent(status, body))
        return servers[-1]

    yield make
    for s in servers:
        s.shutdown()
        s.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_refused_connection_is_a_fail() -> None:
    with pytest.raises(OpFailed, match="not sent"):
        ConsulConnection([f"127.0.0.1:{free_port()}"], timeout=1).grant_lease(2)


def test_renewal_of_a_dead_session_is_lease_not_found(agent: Any) -> None:
    a = agent(404, "Session id 'x' not found")
    with pytest.raises(LeaseNotFound):
        ConsulConnection([a.address]).keepalive("x")


def test_release_of_a_key_no_longer_held_is_lease_not_found(agent: Any) -> None:
    a = agent(200, "false")
    with pytest.raises(LeaseNotFound):
        ConsulLock([a.address]).release("lock-0", "x")


def test_a_refused_cas_is_a_fail(agent: Any) -> None:
    a = agent(200, "false")  # the GET: 404, no entry; the PUT ?cas=0: refused
    with pytest.raises(OpFailed, match="cas mismatch"):
        ConsulRegister([a.address]).cas("k", None, 2)


def test_an_acquire_answered_by_a_failing_leader_is_unknown(agent: Any) -> None:
    a = agent(500, "leadership lost while committing log")
    with pytest.raises(OpUnknown):
        ConsulLock([a.address]).acquire("lock-0", "x", 0.1)
