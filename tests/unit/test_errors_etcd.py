"""etcd's error classification, without Docker: constructed transport exceptions, etcd
gateway error bodies, and the driver against tiny loopback servers that refuse, hang up,
stay silent or answer like the gateway does.

Never sent or refused by etcd -> fail (``OpFailed``, ``LeaseNotFound`` when the lease is
gone); sent and unanswered, or possibly committed -> info (``OpUnknown``).
"""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from http.client import IncompleteRead, RemoteDisconnected
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from clusters.etcd.election import EtcdElection
from clusters.etcd.errors import answer_error, grpc_error
from clusters.etcd.gateway import EtcdConnection
from clusters.etcd.lock import ServiceLock
from clusters.etcd.register import EtcdRegister
from core.client import Invocation, WorkerContext
from core.run_clock import RunClock
from workloads.common.factories import Connector, RegisterFactory
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown, Unreachable
from workloads.http_errors import transport_error

# --- transport (shared with Consul) ------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "sent", "kind"),
    [
        (ConnectionRefusedError(111, "Connection refused"), False, Unreachable),
        (TimeoutError("timed out"), False, Unreachable),
        (OSError(113, "No route to host"), False, Unreachable),
        (TimeoutError("timed out"), True, OpUnknown),
        (ConnectionResetError(104, "Connection reset by peer"), True, OpUnknown),
        (RemoteDisconnected("Remote end closed connection without response"), True, OpUnknown),
        (IncompleteRead(b"par", 10), True, OpUnknown),
    ],
)
def test_transport_errors(exc: Exception, sent: bool, kind: type) -> None:
    e = transport_error(exc, "put k", sent=sent)
    assert type(e) is kind, e
    assert str(e).startswith("put k: ")
    assert ("not sent" in str(e)) is (not sent)


# --- etcd's answers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (404, {"code": 5, "message": "etcdserver: requested lease not found"}, LeaseNotFound),
        (500, {"code": 2, "message": "etcdserver: requested lease not found"}, LeaseNotFound),
        (400, {"code": 9, "message": "election: not leader"}, LeaseNotFound),
        (400, {"code": 3, "message": "etcdserver: duplicate key given in txn request"}, OpFailed),
        (
            400,
            {"code": 11, "message": "etcdserver: mvcc: required revision has been compacted"},
            OpFailed,
        ),
        (429, {"code": 8, "message": "etcdserver: too many requests"}, OpFailed),
        (500, {"code": 2, "message": "etcdserver: too many requests"}, OpFailed),
        (500, {"code": 2, "message": "raft: stopped"}, OpFailed),
        (500, {"code": 2, "message": "election: no leader"}, OpFailed),
        (401, {"code": 16, "message": "etcdserver: invalid auth token"}, OpFailed),
        (503, {"code": 14, "message": "etcdserver: request timed out"}, OpUnknown),
        (503, {"code": 14, "message": "etcdserver: leader changed"}, OpUnknown),
        (503, {"code": 14, "message": "etcdserver: no leader"}, OpUnknown),
        (504, {"code": 4, "message": "context deadline exceeded"}, OpUnknown),
        (500, {"code": 2, "message": "mutex: session is expired"}, OpUnknown),
        (500, {"code": 13, "message": "internal"}, OpUnknown),
        (
            200,
            {
                "error": {
                    "grpc_code": 5,
                    "http_code": 404,
                    "message": "etcdserver: requested lease not found",
                }
            },
            LeaseNotFound,
        ),
        (200, {"error": {"grpc_code": 14, "message": "etcdserver: request timed out"}}, OpUnknown),
        (502, None, OpUnknown),
        (502, {"unexpected": "shape"}, OpUnknown),
    ],
)
def test_answers(status: int, body: Any, kind: type) -> None:
    e = answer_error(status, body, "op")
    assert type(e) is kind, e


def test_grpc_error_reads_both_shapes() -> None:
    assert grpc_error({"code": 5, "message": "m"}) == (5, "m")
    assert grpc_error({"error": {"grpc_code": "14", "message": "x"}}) == (14, "x")
    assert grpc_error("not a dict") == (None, "")


# --- the driver against loopback servers ------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Silent:
    """Accepts and reads; answers never (``hang_up`` False) or hangs up at once."""

    def __init__(self, hang_up: bool) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.hang_up = hang_up
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.recv(65536)
            if self.hang_up:
                conn.close()
            else:
                self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


class _Json(BaseHTTPRequestHandler):
    """A handler answering JSON, quietly."""

    def answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class _Handler(_Json):
    server: Gateway

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.answer(self.server.status, self.server.body)


class Gateway(ThreadingHTTPServer):
    """Answers every POST with a fixed status and JSON body, like etcd's gateway (or as
    ``handler`` answers)."""

    daemon_threads = True

    def __init__(self, status: int, body: Any, handler: type[_Json] = _Handler) -> None:
        self.status, self.body = status, body
        super().__init__(("127.0.0.1", 0), handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def gateway_factory() -> Iterator[Any]:
    servers: list[Gateway] = []

    def make(status: int, body: Any) -> Gateway:
        servers.append(Gateway(status, body))
        return servers[-1]

    yield make
    for s in servers:
        s.shutdown()
        s.server_close()


def test_refused_connection_is_a_fail() -> None:
    with pytest.raises(OpFailed) as e:
        EtcdConnection([f"127.0.0.1:{free_port()}"], timeout=1).grant_lease(2)
    assert "not sent" in str(e.value)


@pytest.mark.parametrize("hang_up", [False, True])
def test_no_answer_after_sending_is_unknown(hang_up: bool) -> None:
    server = Silent(hang_up)
    try:
        conn = EtcdConnection([server.address], timeout=0.3)
        with pytest.raises(OpUnknown):
            conn.call("/v3/kv/put", {"key": "aw==", "value": "dg=="}, "put")
    finally:
        server.close()


def test_keepalive_of_an_unknown_lease_is_lease_not_found(gateway_factory: Any) -> None:
    gw = gateway_factory(200, {"result": {"header": {}, "ID": "123"}})  # no TTL: not found
    with pytest.raises(LeaseNotFound):
        EtcdConnection([gw.address]).keepalive(123)


def test_lock_with_an_expired_lease_is_lease_not_found(gateway_factory: Any) -> None:
    gw = gateway_factory(500, {"code": 2, "message": "etcdserver: requested lease not found"})
    with pytest.raises(LeaseNotFound):
        ServiceLock([gw.address]).acquire("lock-0", 0x29C2, 1.0)


def test_a_failed_cas_comparison_is_a_fail(gateway_factory: Any) -> None:
    gw = gateway_factory(200, {"header": {"revision": "7"}})  # "succeeded" absent: false
    with pytest.raises(OpFailed, match="cas mismatch"):
        EtcdRegister([gw.address]).cas("k", 1, 2)


def test_an_unanswered_read_is_recorded_as_fail_and_a_write_as_info() -> None:
    server = Silent(hang_up=False)
    ctx = WorkerContext(process=0, clock=RunClock())
    try:
        factory = RegisterFactory(Connector.of({"n1": server.address}, EtcdRegister, timeout=0.2))
        client = factory(ctx)
        read = client.invoke(Invocation("read", None, 0))
        write = client.invoke(Invocation("write", 5, 0))
        cas = client.invoke(Invocation("cas", [5, 6], 0))
    finally:
        server.close()
    assert (read.type, write.type, cas.type) == ("fail", "info", "info")
    assert read.node == "n1"


class _Waiting(_Json):
    """A gateway whose lock and campaign requests wait past the client's wait, and whose
    reads say that the client's key is the oldest (what etcd may answer in the moment
    before it drops the key of the cancelled request)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path in ("/v3/lock/lock", "/v3/election/campaign"):
            threading.Event().wait(1.0)  # past the client's wait: it gives up
            return
        key = base64.b64encode(f"harness/lock/lock-0/{0x29C2:x}".encode()).decode()
        if self.path == "/v3/election/leader":
            key = base64.b64encode(f"harness/election/e-0/{0x29C2:x}".encode()).decode()
        kv = {"key": key, "create_revision": "16", "mod_revision": "16", "value": ""}
        self.answer(200, {"kvs": [kv], "kv": kv, "header": {"revision": "16"}})


def test_a_lock_or_campaign_whose_wait_ran_out_is_unknown_whatever_a_read_says() -> None:
    """etcd drops the key of a lock request or campaign cancelled while it waits: a read
    naming the client's key as the oldest right then proves nothing (a CI run without
    faults reported two leaders from such a read). The outcome is unknown."""
    server = Gateway(200, None, _Waiting)
    try:
        with pytest.raises(OpUnknown, match="cancelled while it waits"):
            ServiceLock([server.address]).acquire("lock-0", 0x29C2, 0.2)
        with pytest.raises(OpUnknown, match="cancelled while it waits"):
            EtcdElection([server.address]).campaign("e-0", 0x29C2, {"name": "e-0"}, 0.2)
    finally:
        server.shutdown()
        server.server_close()
