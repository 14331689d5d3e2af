"""Client threads: a run's clients in threads of the harness process (``--clients thread``,
chosen by ``harness.client_mode``).

A ``ThreadWorker`` is the runner's handle on one, the twin of ``harness.worker.Worker``:
it takes an invocation (a queue the thread waits on), and when its client returns it
hands the completion to the runner itself (``Done``), in the thread: the runner records
it and, when the generator's next operation is this thread's and due, opens it and gives
it back, so the thread goes straight on with it. The common path has no handoff between
threads at all: no queue, no pipe, no wake-up of the runner's loop, which is woken
(``Bell``) only for what the thread cannot do itself (an operation of another thread or
not yet due, a fault, the end). No process and no pickling either: the cost a worker
process adds to each operation is gone. What a thread cannot do is be frozen or killed
alone: a run with a fault aimed at a client keeps its processes. A thread whose
operation timed out is abandoned as a worker process is (a fresh one takes its thread
under a new process id), but it cannot be stopped: it goes on until its client returns
(what it does then is recorded, as for a process), then closes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from queue import SimpleQueue

from core.client import ClientFactory, Completion, Invocation, WorkerContext
from harness.worker import LazyClient

Done = Callable[["ThreadWorker", Completion], "Invocation | None"]
"""What a client thread does with its completion (the runner's, in the thread): the
next invocation to go on with, or None to wait for one."""


class Bell:
    """Wakes the runner's loop from its wait: a pipe it polls beside its other events,
    rung (one byte) only while the loop sleeps (``asleep``, set and read under the
    runner's lock, so no ring is lost and none is written for nothing); by a signal's
    handler, which holds no lock, whenever (``wake``)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self.asleep = False
        self._closed = False

    def fileno(self) -> int:
        """The pipe's end to wait on."""
        return self._read

    def ring(self) -> None:
        """Wake the loop, if it sleeps (once: it is awake from then on)."""
        if self.asleep and not self._closed:
            self.asleep = False
            try:
                os.write(self._write, b"\0")
            except OSError:  # full: the loop wakes anyway
                pass

    def wake(self) -> None:
        """Wake the loop whether it sleeps or not (a signal's handler, which runs between
        any two steps of the loop's thread and cannot know: a byte too many is drained)."""
        if not self._closed:
            try:
                os.write(self._write, b"\0")
            except OSError:  # full: the loop wakes anyway
                pass

    def drain(self) -> None:
        """Empty the pipe (the loop is awake)."""
        try:
            while os.read(self._read, 4096):
                pass
        except OSError:  # emptied
            pass

    def close(self) -> None:
        """Close the pipe; a ring afterwards writes nothing (its number may be another
        file's by then)."""
        if not self._closed:
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
        self, process: int, factory: ClientFactory, ctx: WorkerContext, done: Done
    ) -> None:
        self.process = process
        self._inbox: SimpleQueue[Invocation | None] = SimpleQueue()
        self._done = done
        self._client = LazyClient(factory, ctx)
        self._thread = threading.Thread(target=self._serve, name=f"client-{process}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            inv = self._inbox.get()
            while inv is not _STOP:
                nxt = self._done(self, self._client.invoke(inv))
                inv = nxt if nxt is not None else self._inbox.get()
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
        """Ask it to close, and wait up to ``timeout`` for it to end (not when asked by
        the thread itself, which ends on its own once this returns); a thread still in
        its client's operation cannot be killed: it goes on (``running``)."""
        self.close_client()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """Still in its client (stopped, it has not ended yet)."""
        return self._thread.is_alive()
