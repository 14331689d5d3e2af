"""Error classification of the sim driver and of the workload clients built on it.

Connection refused before sending -> fail; server refusal -> fail; timeout or lost
connection after sending -> info.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clusters.sim.client import LeaseNotFound, NoAnswer, NotSent, Rejected, SimClient
from core.client import Invocation, WorkerContext
from core.run_clock import RunClock
from workloads.common import critical
from workloads.common.resource import ResourceClient, ResourceServer
from workloads.errors import OpFailed, OpUnknown, completion_for
from workloads.lock import LockClient
from workloads.register import RegisterClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SilentServer:
    """Accepts connections and reads requests; answers never, or hangs up on each."""

    def __init__(self, hang_up: bool) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.hang_up = hang_up
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

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
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            c.close()
        self.thread.join(2)


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    s = SilentServer(hang_up=False)
    yield s
    s.close()


@pytest.fixture
def hangs_up() -> Iterator[SilentServer]:
    s = SilentServer(hang_up=True)
    yield s
    s.close()


def test_connection_refused_is_not_sent_and_completes_fail() -> None:
    c = SimClient(f"127.0.0.1:{free_port()}")
    with pytest.raises(NotSent) as e:
        c.grant_lease(1)
    assert isinstance(e.value, OpFailed)
    assert completion_for(e.value).type == "fail"


def test_timeout_after_sending_is_no_answer_and_completes_info(silent: SilentServer) -> None:
    c = SimClient(silent.address, timeout=0.2)
    with pytest.raises(NoAnswer, match="no answer") as e:
        c.grant_lease(1)
    assert isinstance(e.value, OpUnknown)
    assert completion_for(e.value).type == "info"


def test_connection_lost_after_sending_is_no_answer(hangs_up: SilentServer) -> None:
    c = SimClient(hangs_up.address, timeout=2)
    with pytest.raises(NoAnswer, match="closed the connection"):
        c.keepalive(1)


def test_blocking_acquire_waits_longer_than_the_request_timeout(silent: SilentServer) -> None:
    c = SimClient(silent.address, timeout=0.1)
    t = RunClock()
    with pytest.raises(NoAnswer):
        c.acquire("l", 1, wait=0.3)
    assert t.seconds() >= 0.4  # wait + timeout


class FakeLockBackend:
    """A lock driver whose acquire raises a chosen error."""

    def __init__(self, acquire_error: Exception | None = None) -> None:
        self.acquire_error = acquire_error
        self.revoked: list[int] = []

    def grant_lease(self, ttl: float) -> int:
        return 7

    def keepalive(self, lease: int) -> float:
        return 1.0

    def revoke(self, lease: int) -> None:
        self.revoked.append(lease)

    def acquire(self, name: str, lease: int, wait: float) -> int:
        if self.acquire_error is not None:
            raise self.acquire_error
        return 3

    def release(self, name: str, lease: int) -> None:
        raise LeaseNotFound("lease not found")

    def close(self) -> None:
        pass


def lock_client(tmp_path: Path, backend: Any, resource: str) -> LockClient:
    ctx = WorkerContext(1, RunClock(), tmp_path / "events.jsonl")
    return LockClient(
        ctx,
        lambda: backend,
        ResourceClient(resource, timeout=0.2),
        "l",
        ttl=1.0,
        keepalive=10.0,
        work=0.0,
        wait=1.0,
        node="sim",
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (NotSent("refused"), "fail"),
        (Rejected("not granted"), "fail"),
        (LeaseNotFound("lease not found"), "fail"),
        (NoAnswer("no answer"), "info"),
    ],
)
def test_lock_acquire_errors_map_to_completions(
    tmp_path: Path, error: Exception, expected: str
) -> None:
    backend = FakeLockBackend(error)
    client = lock_client(tmp_path, backend, f"127.0.0.1:{free_port()}")
    try:
        c = client.invoke(Invocation("acquire"))
    finally:
        client.close()
    assert (c.type, c.error, c.node) == (expected, str(error), "sim")
    assert backend.revoked == [7]  # the lease is let go either way


def test_lock_write_errors_map_to_completions(tmp_path: Path, silent: SilentServer) -> None:
    refused = lock_client(tmp_path, FakeLockBackend(), f"127.0.0.1:{free_port()}")
    unanswered = lock_client(tmp_path, FakeLockBackend(), silent.address)
    try:
        assert refused.invoke(Invocation("write", 1)).type == "fail"  # not holding yet
        for client, expected in ((refused, "fail"), (unanswered, "info")):
            ok = client.invoke(Invocation("acquire")).value
            assert ok == {"token": 3, "lease": 7, "name": "l"}
            assert client.invoke(Invocation("write", 1)).type == expected
    finally:
        refused.close()
        unanswered.close()


def test_release_of_a_lost_lease_fails_and_records_the_loss(tmp_path: Path) -> None:
    client = lock_client(tmp_path, FakeLockBackend(), f"127.0.0.1:{free_port()}")
    try:
        client.invoke(Invocation("acquire"))
        c = client.invoke(Invocation("release"))
        assert (c.type, c.error) == ("fail", "lease not found")
        assert client.invoke(Invocation("release")).error == "not holding anything"
    finally:
        client.close()
    text = (tmp_path / "events.jsonl").read_text()
    assert '"event":"lease-lost"' in text and '"event":"lease-granted"' in text


class FakeRegister:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def read(self, key: str) -> Any:
        raise self.error

    def write(self, key: str, value: Any) -> None:
        raise self.error

    def cas(self, key: str, old: Any, new: Any) -> None:
        raise self.error

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("error", "expected"),
    [(NotSent("refused"), "fail"), (Rejected("cas mismatch"), "fail"), (NoAnswer("t"), "info")],
)
def test_register_errors_map_to_completions(error: Exception, expected: str) -> None:
    client = RegisterClient(WorkerContext(1, RunClock()), lambda: FakeRegister(error))
    for inv in (
        Invocation("read", key="k"),
        Invocation("write", 1, "k"),
        Invocation("cas", [1, 2], "k"),
    ):
        assert client.invoke(inv).type == expected


def test_a_write_names_its_writer_and_token_in_the_resource(tmp_path: Path) -> None:
    """Issue 28: every write's value was {"name": "lock-0"}: whose data the resource held
    could not be read from the data."""
    with ResourceServer(tmp_path / "resource.jsonl", RunClock()) as server:
        client = lock_client(tmp_path, FakeLockBackend(), server.address)
        try:
            client.invoke(Invocation("acquire", {"name": "lock-0"}))
            done = client.invoke(Invocation("write", {"name": "lock-0"}))
        finally:
            client.close()
        (logged,) = server.records()
    signed = {"name": "lock-0", "writer": 1, "token": 3}
    assert done.type == "ok" and done.value == {"value": signed, "token": 3}
    assert logged["value"] == signed and (logged["writer"], logged["token"]) == (1, 3)


@pytest.mark.parametrize(
    ("value", "signed"),
    [
        ({"name": "election-0"}, {"name": "election-0", "writer": 2, "epoch": 9}),
        (5, {"value": 5, "writer": 2, "epoch": 9}),
        (None, {"writer": 2, "epoch": 9}),
    ],
)
def test_an_election_write_is_signed_with_its_epoch(value: Any, signed: dict[str, Any]) -> None:
    assert critical.signed(value, 2, "epoch", 9) == signed
