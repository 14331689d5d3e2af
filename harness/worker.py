"""Worker processes: one OS process per client thread.

A worker builds its client from a picklable ``ClientFactory`` and executes the invocations
the runner sends it, one at a time, replying with a ``Completion``. On the pipe both are
plain tuples pickled by hand (``_wire``): a dataclass goes through ``copyreg`` and
multiprocessing's own pickler, a tuple does not, and these messages are the run's hottest
path (two per operation). Being a real process,
it can be frozen with SIGSTOP, its keepalive threads included, exactly as a GC pause
freezes a lock holder. A factory with an ``interpreter`` (a lock library's environment,
``workloads.libraries.env``) has its workers run with that Python.

Workers ignore SIGINT (the runner decides how a run stops) and die with the runner
(``PR_SET_PDEATHSIG``, forked through ``start_tied``: with the process, not with the
thread that spawned them), so a kill -9 of the harness leaves no worker behind. Their log
records (the client libraries') go to the harness's log file (``harness.logs``).
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.spawn as mp_spawn
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from core.client import Client, ClientFactory, Completion, Invocation, WorkerContext
from core.procutil import die_with_parent, signal_quietly, start_tied
from harness.logs import log_files, worker_logs_to

_CTX = mp.get_context("spawn")
_PROTOCOL = pickle.HIGHEST_PROTOCOL
_STOP = b""
"""The message that asks a worker to close its client and exit."""
_EXECUTABLE = threading.Lock()
"""Held while a worker starts under another interpreter (``_interpreter``)."""


@contextmanager
def _interpreter(python: str | None) -> Iterator[None]:
    """Workers started inside run with ``python`` (a factory's ``interpreter``: a lock
    library's environment), None: the harness's own; multiprocessing keeps one executable
    for the whole process, so it is set for the start alone, and every start takes the lock
    (one with the harness's own Python must not start while another's is set)."""
    with _EXECUTABLE:
        if python is None:
            yield
            return
        was = mp_spawn.get_executable()
        _CTX.set_executable(python)
        try:
            yield
        finally:
            _CTX.set_executable(was)


def _wire(msg: Invocation | Completion) -> bytes:
    """An invocation or completion as the bytes the pipe carries: its fields as a tuple."""
    if isinstance(msg, Invocation):
        return pickle.dumps((msg.f, msg.value, msg.key), _PROTOCOL)
    return pickle.dumps((msg.type, msg.value, msg.error, msg.node), _PROTOCOL)


def _write(fd: int, data: bytes) -> None:
    """One message on a pipe in multiprocessing's framing (a 4-byte length, then the
    bytes), in one ``write`` as ``send_bytes`` makes it, without its checks and copies."""
    view = memoryview(len(data).to_bytes(4, "big", signed=True) + data)
    while view:
        view = view[os.write(fd, view) :]


class _Reader:
    """Reads the messages of one end of a worker's pipe (multiprocessing's framing: a
    4-byte length, then the bytes) with one ``read`` each where ``recv_bytes`` makes two:
    what arrived is kept, and a message is taken from it once whole. EOFError when the
    other end is closed."""

    def __init__(self, conn: Connection) -> None:
        self._fd = conn.fileno()
        self._buf = bytearray()

    def read(self) -> bytes:
        buf = self._buf
        while True:
            if len(buf) >= 4:
                end = 4 + int.from_bytes(buf[:4], "big", signed=True)
                if len(buf) >= end:
                    msg = bytes(buf[4:end])
                    del buf[:end]
                    return msg
            chunk = os.read(self._fd, 65536)
            if not chunk:
                raise EOFError
            buf += chunk


def _invocation(data: bytes) -> Invocation:
    return Invocation(*pickle.loads(data))


def _completion(data: bytes) -> Completion:
    return Completion(*pickle.loads(data))


def _worker_main(
    conn: Connection,
    factory: ClientFactory,
    ctx: WorkerContext,
    parent: int,
    ready: Any,
    logs: tuple[str, ...] = (),
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent=parent)
    worker_logs_to(logs, ctx.process)
    ready.set()
    client = LazyClient(factory, ctx)
    reader = _Reader(conn)
    try:
        while True:
            try:
                msg = reader.read()
            except (EOFError, OSError):
                return
            if msg == _STOP:
                return
            done = client.invoke(_invocation(msg))
            try:
                _write(conn.fileno(), _wire(done))
            except (BrokenPipeError, OSError):
                return
    finally:
        client.close()


class LazyClient:
    """A worker's client, in a process or a thread: built at its first operation (a
    failure to build is that operation's ``info``), an exception nothing classified
    completing its operation ``info`` with what it was."""

    def __init__(self, factory: ClientFactory, ctx: WorkerContext) -> None:
        self._factory = factory
        self._ctx = ctx
        self._client: Client | None = None

    def invoke(self, inv: Invocation) -> Completion:
        try:
            if self._client is None:
                self._client = self._factory(self._ctx)
            return self._client.invoke(inv)
        except Exception as e:  # a client bug or an unclassified driver error
            tb = traceback.format_exc(limit=3).strip().splitlines()[-1]
            return Completion("info", error=f"unexpected {type(e).__name__}: {e} ({tb})")

    def close(self) -> None:
        """Close the client, if it was built (what it holds is let go); quietly."""
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass


@dataclass
class Worker:
    """The runner's handle on one worker process."""

    process: int
    proc: Any  # multiprocessing.Process (spawn context)
    conn: Connection
    ready: Any  # multiprocessing.Event, set once the worker will die with the runner
    reader: _Reader

    @classmethod
    def spawn(cls, process: int, factory: ClientFactory, ctx: WorkerContext) -> Worker:
        parent, child = _CTX.Pipe()
        ready = _CTX.Event()
        proc = _CTX.Process(
            target=_worker_main,
            args=(child, factory, ctx, os.getpid(), ready, log_files()),
            name=f"worker-{process}",
            daemon=True,
        )
        with _interpreter(getattr(factory, "interpreter", None)):
            start_tied(proc.start)  # forked by a thread that lives as long as the harness
        child.close()
        return cls(process=process, proc=proc, conn=parent, ready=ready, reader=_Reader(parent))

    def is_ready(self) -> bool:
        """Started far enough to die with the runner: only then may a nemesis freeze it
        (a worker frozen earlier would outlive a killed harness)."""
        return bool(self.ready.is_set())

    def wait_ready(self, timeout: float) -> bool:
        return bool(self.ready.wait(timeout))

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    def fileno(self) -> int:
        """The runner's end of the pipe, to wait on."""
        return self.conn.fileno()

    def send(self, inv: Invocation) -> None:
        _write(self.conn.fileno(), _wire(inv))

    def recv(self) -> Completion:
        """The completion of the operation sent (EOFError or OSError: the worker died)."""
        return _completion(self.reader.read())

    @property
    def running(self) -> bool:
        """Its process has not ended."""
        return bool(self.proc.is_alive())

    def close_client(self) -> None:
        """Ask the worker to close its client and exit, without waiting for it."""
        try:
            _write(self.conn.fileno(), _STOP)
        except (OSError, ValueError):
            pass

    def stop(self, timeout: float = 2.0) -> None:
        """Thaw, ask to close, then terminate and finally kill. Safe to call twice."""
        if self.proc.pid is not None:
            signal_quietly(self.pid, signal.SIGCONT)
        self.close_client()
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)
        try:
            self.conn.close()
        except OSError:
            pass
