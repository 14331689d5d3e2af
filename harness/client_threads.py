"""Client threads: a run's clients in threads of the harness process (``--clients thread``,
chosen by ``harness.client_mode``).

A ``ThreadWorker`` is the runner's handle on one, the twin of ``harness.worker.Worker``:
it takes an invocation (a queue the thread waits on) and leaves its completion in the
run's ``Answers``, where the runner picks every completion up at once, woken by a byte on
a pipe only when it may be asleep. No process, no pickling, no pipe per operation: the
cost a worker process adds to each operation is gone. What a thread cannot do is be
frozen or killed alone: a run with a fault aimed at a client keeps its processes. A
thread whose operation timed out is abandoned as a worker process is (a fresh one takes
its thread under a new process id), but it cannot be stopped: it goes on until its
client returns (what it does then is recorded, as for a process), then closes.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from queue import SimpleQueue

from core.client import ClientFactory, Completion, Invocation, WorkerContext
from harness.worker import LazyClient


class Answers:
    """Where the client threads leave their completions for the runner: a queue, and a
    pipe the runner waits on beside its other events (a byte on it only when the runner
    said it may wait: ``waiting``)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._done: deque[tuple[ThreadWorker, Completion]] = deque()
        self._waiting = False
        self._rings = threading.Lock()  # no byte written once the pipe is closed
        self._closed = False

    def fileno(self) -> int:
        """The pipe's end to wait on."""
        return self._read

    def put(self, worker: ThreadWorker, done: Completion) -> None:
        """A thread's completion (from the thread)."""
        self._done.append((worker, done))
        if self._waiting:
            with self._rings:
                if self._waiting and not self._closed:
                    self._waiting = False
                    try:
                        os.write(self._write, b"\0")
                    except OSError:  # full: the runner is behind, and reads anyway
                        pass

    def waiting(self) -> bool:
        """The runner may wait from now on: a completion left after this rings the
        pipe. True when one is here already (it must not wait, then)."""
        self._waiting = True
        return bool(self._done)

    def take(self, rung: bool) -> list[tuple[ThreadWorker, Completion]]:
        """Every completion left, oldest first; ``rung``: the pipe has bytes to empty."""
        self._waiting = False
        if rung:
            try:
                while os.read(self._read, 4096):
                    pass
            except OSError:  # emptied
                pass
        done = self._done
        return [done.popleft() for _ in range(len(done))]

    def close(self) -> None:
        """Close the pipe; a thread still running afterwards writes nothing more (its
        number may be another file's by then)."""
        with self._rings:
            if self._closed:
                return
            self._closed = True
            os.close(self._read)
            os.close(self._write)


_STOP = None
"""What asks a client thread to close its client and end."""


class ThreadWorker:
    """The runner's handle on one client thread (``harness.worker.Worker``'s twin)."""

    pid: int | None = None
    """No process of its own: nothing a fault could signal."""

    def __init__(
        self, process: int, factory: ClientFactory, ctx: WorkerContext, answers: Answers
    ) -> None:
        self.process = process
        self._inbox: SimpleQueue[Invocation | None] = SimpleQueue()
        self._answers = answers
        self._client = LazyClient(factory, ctx)
        self._thread = threading.Thread(target=self._serve, name=f"client-{process}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            while (inv := self._inbox.get()) is not _STOP:
                self._answers.put(self, self._client.invoke(inv))
        finally:
            self._client.close()

    def is_ready(self) -> bool:
        return True

    def wait_ready(self, timeout: float) -> bool:
        return True

    def send(self, inv: Invocation) -> None:
        self._inbox.put(inv)

    def close_client(self) -> None:
        """Ask the thread to close its client and end, once its operation returns."""
        self._inbox.put(_STOP)

    def stop(self, timeout: float = 2.0) -> None:
        """Ask it to close, and wait up to ``timeout`` for it to end; a thread still in
        its client's operation cannot be killed: it goes on (``running``)."""
        self.close_client()
        self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """Still in its client (stopped, it has not ended yet)."""
        return self._thread.is_alive()
