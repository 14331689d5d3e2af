"""The runner: interprets a generator, drives the workers and the nemesis, records the history.

One loop in one thread owns all bookkeeping. It asks the generator for the next request,
waits until the request is due (re-asking if an event arrives first), timestamps the
invocation, hands it to the thread's worker process (or the nemesis thread), and
timestamps each completion as it arrives. Every op is handed to ``record`` the moment it
happens; a history written in batches (``core.store.HistoryWriter(batched=True)``) is
flushed through ``flush`` at most ``FLUSH_NS`` after its oldest unwritten op, always
before a fault is invoked and when the run ends, so a kill -9 of the harness loses at most
the last few milliseconds of operations, and a history cut there still checks.

Per operation the loop does only what that operation needs: the waits are on one
``select.poll`` whose set changes as operations open and close (not a new selector per
wait), the contexts handed to the generator share one map of threads to processes until a
thread changes process, the earliest timeout is the oldest open operation's (every client
operation gets the same ``op_timeout``, and ``_open`` keeps invocation order), and the
messages to the workers are plain tuples (``harness.worker``).

The clients run in worker processes (``harness.worker``) or, ``threads``, in threads of
this process (``harness.client_threads``). A client thread does the loop's step for its
own operation itself (``_thread_done``): it records the completion, asks the generator,
and when the next request is its own and due, records the invocation and goes on with
it, all under the runner's one lock, which the loop holds except while it waits. The
loop keeps what a thread cannot do (another thread's request, one not yet due, a fault,
timeouts, the flush timer, the end), woken by the threads' ``Bell`` only then. The
history's semantics are the loop's: the invocation stamped and recorded before the
request is sent, the completion after the answer came, one op at a time under the lock.

The ends of a run race with its clients, and the history says what happened. ``stop``
(another thread's: the live check's) takes the lock, so nothing is invoked once it
returned, and rings the ``Bell``, so a loop asleep till a request is due ends the run
then. A signal's handler, which raises to end the run (``harness.orchestrate``), runs
between two of the loop's steps (``harness.held_signals``), never in the middle of its
bookkeeping nor while the lock changes hands. Once the loop has ended (a signal, an
error), an operation still open stays open in the history, as a worker process's does:
its client thread's answer is not recorded.

Timeouts: a client op still open after ``op_timeout`` seconds completes as ``info``
("timed out"). Its worker is then abandoned, not killed: a worker frozen by a client pause
must still be able to wake and do its late write, which is the point of the test. The
thread gets a new worker with a new process id (old id + concurrency, as in Jepsen). A
worker that dies mid-operation is handled the same way. A client thread cannot be killed
at all: abandoned, it goes on until its client returns, and its ``worker-stopped`` event
says when it may still be running.

What an abandoned worker does afterwards is still evidence, so it is recorded in the run's
client events (``events.jsonl``): ``late-completion`` when its operation finally returns
(its type, value and error, and when it was invoked), then ``worker-stopped`` when the
runner stops it (its client closes then, ending any lease it held: ``lease-ended``).

A replay (``core.gen.replay``) ends each client thread where its recording ended: once
the generator names a thread ``ended``, its worker is asked to close its client (letting
go of what it holds, as the recorded run's end did) and the thread takes no more ops
(``worker-stopped``, reason ``its recording ended``).
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import Pipe
from pathlib import Path
from typing import Any

from core.client import ClientFactory, Completion, Invocation, WorkerContext
from core.gen import PENDING, Context, Generator, Request
from core.gen.replay import Replay
from core.ops import NEMESIS, Op
from core.run_clock import RunClock, ns
from core.store import JsonlWriter
from harness.client_threads import Bell, ThreadWorker
from harness.held_signals import HeldSignals
from harness.load import CpuMeter, Load
from harness.worker import Worker
from nemesis.base import Nemesis
from workloads.holders import Holder, Holders

log = logging.getLogger("harness.runner")

Thread = int | str
AnyWorker = Worker | ThreadWorker
"""A client's worker: a process of its own, or a thread of the harness
(``harness.client_threads``)."""

CLOSE_S = 2.0
"""How long ``close`` waits for a worker process to end before it terminates it, and for
the client threads, all together: one still in its client cannot be killed and goes on
(its ``worker-stopped`` event says so), ending once its client returns."""

FLUSH_NS = 5_000_000
"""The longest an op waits, recorded but not yet written to the history file (5 ms)."""

QUIET_EVERY_NS = 200_000_000
QUIET_MAX_NS = 20_000_000
"""Client threads that go straight on from one operation to the next leave no point
where every operation invoked had completed (a *cut*, where the check during the run
proves a key's history so far and the final check starts: ``checkers.linear.resume``);
worker processes leave some, their completions taken by the loop in batches. So every
``QUIET_EVERY_NS`` (0.2 s, the live check's turn) the client threads hold their next
operations until every open one has completed, for at most ``QUIET_MAX_NS`` (20 ms: a
client frozen or cut off does not hold the others), then go on."""

_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR


@dataclass
class Stats:
    """Live counters for the progress display."""

    ok: int = 0
    fail: int = 0
    info: int = 0
    invoked: int = 0
    active_faults: dict[str, int] = field(default_factory=dict)  # f -> start time

    @property
    def completed(self) -> int:
        return self.ok + self.fail + self.info


@dataclass
class _Open:
    invoke: Op
    deadline: int | None


@dataclass
class _Abandoned:
    """A worker whose operation ended ``info``, and that operation's invocation."""

    worker: AnyWorker
    invoke: Op


class _NemesisThread:
    """Runs nemesis invocations one at a time in a thread; completions come back through a
    pipe so the runner can wait on it together with the workers."""

    def __init__(self, nemesis: Nemesis) -> None:
        self.nemesis = nemesis
        self.conn, self._child = Pipe()
        self._inbox: list[Invocation] = []
        self._cv = threading.Condition()
        self._stop = False
        self._t = threading.Thread(target=self._loop, name="nemesis", daemon=True)
        self._t.start()

    def send(self, inv: Invocation) -> None:
        with self._cv:
            self._inbox.append(inv)
            self._cv.notify()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._inbox and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                inv = self._inbox.pop(0)
            try:
                done = self.nemesis.invoke(inv)
            except Exception as e:
                log.exception("nemesis %s failed", inv.f)
                done = Completion("info", error=f"nemesis error: {type(e).__name__}: {e}")
            self._child.send(done)

    def close(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._t.join(timeout=60)


class Runner:
    """Drives one run's operations. ``run()`` returns when the generator is exhausted and
    every open operation completed or timed out; ``stop()`` (another thread, or a signal
    handler) makes it stop invoking and return soon."""

    def __init__(
        self,
        *,
        generator: Generator,
        client_factory: ClientFactory,
        concurrency: int,
        clock: RunClock,
        record: Callable[[Op], None],
        nemesis: Nemesis | None = None,
        op_timeout: float = 10.0,
        events_path: Path | None = None,
        holder: Holder | None = None,
        flush: Callable[[], None] | None = None,
        threads: bool = False,
    ) -> None:
        """``holder``: who the workload's holder is (``Workload.holder``), followed op by
        op for the faults aimed at it. ``flush``: writes out what ``record`` was given
        (a batched history); None: ``record`` writes each op itself. ``threads``: the
        clients run in threads of this process (``harness.client_threads``), not in
        worker processes."""
        self.gen = generator
        self.factory = client_factory
        self.concurrency = concurrency
        self.clock = clock
        self._record_fn = record
        self._flush_fn = flush
        self._unflushed_since: int | None = None  # run-clock time of the oldest op unwritten
        self.nemesis = nemesis
        self.op_timeout_ns = ns(op_timeout)
        self.events_path = events_path
        self.stats = Stats()
        self._index = 0
        self._stopping = False
        self._stop_by: int | None = None  # when the ops open at a stop end ``info``
        self._workers: dict[int, AnyWorker] = {}
        self._abandoned: list[_Abandoned] = []
        self._ended: list[AnyWorker] = []  # a replay's threads whose recording ended
        self._events = JsonlWriter(events_path) if events_path is not None else None
        self._thread_process: dict[Thread, Any] = {}
        self._open: dict[Thread, _Open] = {}
        self._holders = Holders(holder)
        self._nodes: dict[Thread, str] = {}  # the node each thread's client talks to
        self._nemesis_thread: _NemesisThread | None = None
        self._poll = select.poll()
        # fd (a worker process's pipe, the nemesis's), or a client thread -> whose answer
        # it brings
        self._waiting: dict[int | ThreadWorker, Thread | _Abandoned] = {}
        self._lock = threading.Lock()
        """The runner's state, held by the loop except while it waits, and by a client
        thread doing its own step (``_thread_done``)."""
        self._client_threads = threads
        self._bell = Bell()  # wakes the loop: a client thread, a stop, a signal
        self._poll.register(self._bell.fileno(), _READABLE)
        self._signals = HeldSignals(self._bell.wake)
        self._loop_thread: int | None = None  # the thread ``run`` runs in, while it runs
        self._looping = False  # the loop runs: a client thread may go on by itself
        self._exhausted = False  # the generator said it is done
        self._closed = False
        self._changes = 0  # completions so far: the generator changed under a wait
        self._failure: BaseException | None = None  # raised in a client thread's step
        self._quiet_at = 0  # run-clock time of the next quiet point sought (threads)
        self._quiet_until: int | None = None  # the quiet point sought gives up then
        self._threads: frozenset[Thread] = frozenset()
        self._view: dict[Thread, Any] = {}  # the contexts' thread -> process, shared
        self.cpu = CpuMeter()
        self._span: tuple[int, int] | None = None  # run-clock start and end of run()

    # -- the view a nemesis gets (in its thread: read under the runner's lock) ----------
    def client_pids(self) -> dict[int, int]:
        with self._held():
            return {
                w.process: w.pid
                for w in self._workers.values()
                if w.pid is not None and w.is_ready()
            }

    @property
    def holder(self) -> Holder | None:
        return self._holders.holder

    def working_since(self, process: int) -> int | None:
        with self._held():
            for o in self._open.values():
                if o.invoke.process == process and self._holders.works_in(o.invoke.f):
                    return o.invoke.time
            return None

    def holders(self) -> list[int]:
        """Processes holding by their own account (``workloads.holders``), the most
        recent holder first: with one lock, the current holder."""
        with self._held():
            return self._holders.current()

    def node_of(self, process: int) -> str | None:
        """The node named by the completions of ``process``'s thread (a replacement
        process keeps its thread's node)."""
        with self._held():
            for t, p in self._thread_process.items():
                if p == process:
                    return self._nodes.get(t)
            return None

    @contextmanager
    def _held(self) -> Iterator[None]:
        """The runner's lock, for another thread than the loop's (a nemesis's, the live
        check's); the loop's own holds it already (a signal's handler runs between its
        steps)."""
        if self._loop_thread == threading.get_ident():
            yield
            return
        with self._lock:
            yield

    # -- lifecycle ---------------------------------------------------------------------
    def start_workers(self) -> None:
        """Start every worker and wait until each is ready, then set the nemesis up."""
        for t in range(self.concurrency):
            self._spawn(t, t)
        for w in self._workers.values():
            if not w.wait_ready(60):
                raise RuntimeError(f"worker process {w.process} did not start within 60 s")
        self.setup_nemesis()

    def begin(self, generator: Generator, nemesis: Nemesis | None) -> None:
        """The schedule and the nemesis of workers already started, decided once they
        are ready (starting many workers on a busy machine takes seconds: a schedule
        counted from before would spend its time limit on it)."""
        self.gen, self.nemesis = generator, nemesis
        self.setup_nemesis()

    def setup_nemesis(self) -> None:
        """Set the nemesis up (once) and start its thread."""
        if self.nemesis is not None and self._nemesis_thread is None:
            self._thread_process[NEMESIS] = NEMESIS
            self._threads_changed()
            self.nemesis.setup(self)
            self._nemesis_thread = _NemesisThread(self.nemesis)

    def stop(self, grace: float | None = None) -> None:
        """Stop invoking new operations; open ones get until their timeout, or until
        ``grace`` seconds from now when that is sooner: then they end ``info`` (their
        outcome unknown), as a timeout does. Nothing is invoked once this returns: it
        takes the runner's lock (its own already, in the loop's thread: a signal's
        handler, which runs between the loop's steps)."""
        with self._held():
            if grace is not None:
                self._stop_by = self.clock.now() + ns(grace)
            self._stopping = True
            self._bell.ring()  # the loop, asleep, ends the run from now on

    def close(self) -> None:
        """Stop every worker (thawing paused ones first) and the nemesis thread. The
        client threads are asked to end all at once, and waited for ``CLOSE_S`` in all."""
        with self._lock:
            self._closed = True  # a client thread's step does nothing from now on
        everyone = [*self._workers.values(), *(a.worker for a in self._abandoned), *self._ended]
        for thread in everyone:
            if isinstance(thread, ThreadWorker):
                thread.close_client()
        by = time.monotonic() + CLOSE_S

        def left(w: AnyWorker) -> float:
            return max(0.0, by - time.monotonic()) if isinstance(w, ThreadWorker) else CLOSE_S

        for w in self._workers.values():
            w.stop(timeout=left(w))
        for a in self._abandoned:
            self._stop_abandoned(a, timeout=left(a.worker))
        for w in self._ended:
            w.stop(timeout=left(w))
        self._ended.clear()
        self._workers.clear()
        self._abandoned.clear()
        with self._lock:
            self._bell.close()
        if self._events is not None:
            self._events.close()
        if self._nemesis_thread is not None:
            self._nemesis_thread.close()
            self._nemesis_thread = None

    def _spawn(self, thread: int, process: int) -> None:
        ctx = WorkerContext(
            process=process, clock=self.clock, events_path=self.events_path, thread=thread
        )
        if self._client_threads:
            self._workers[thread] = ThreadWorker(process, self.factory, ctx, self._thread_done)
        else:
            self._workers[thread] = Worker.spawn(process, self.factory, ctx)
        self._thread_process[thread] = process
        self._threads_changed()

    def _threads_changed(self) -> None:
        """A thread started, ended or changed process: the contexts from now on see it."""
        self._threads = frozenset(self._thread_process)
        self._view = dict(self._thread_process)

    # -- recording ---------------------------------------------------------------------
    def _record(self, **fields: Any) -> Op:
        op = Op(index=self._index, time=self.clock.now(), **fields)
        self._index += 1
        self._record_fn(op)
        if self._unflushed_since is None and self._flush_fn is not None:
            self._unflushed_since = op.time
            self._bell.ring()  # a loop asleep till a later timeout flushes it in time
        return op

    def _flush(self) -> None:
        """Write out the ops recorded and not yet written."""
        if self._unflushed_since is not None and self._flush_fn is not None:
            self._unflushed_since = None
            self._flush_fn()

    def _context(self, now: int) -> Context:
        threads = self._threads
        return Context(now, threads.difference(self._open), self._view, threads)

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> None:
        if not self._workers:
            self.start_workers()
        start = self.clock.now()
        self.cpu.start(self._pids())
        try:
            with self._signals.held(), self._lock:
                self._looping, self._loop_thread = True, threading.get_ident()
                try:
                    self._loop()
                finally:
                    self._looping, self._loop_thread = False, None
                    self._flush()
            self._signals.raise_held()  # a signal after the loop's last step
        finally:
            self.cpu.stop(self._pids())
            self._span = (start, self.clock.now())

    def _pids(self) -> list[int]:
        """Every worker process's id: working, abandoned, ended (none for client threads,
        whose CPU is the harness process's)."""
        workers = [*self._workers.values(), *(a.worker for a in self._abandoned), *self._ended]
        return [w.pid for w in workers if w.pid is not None]

    def load(self, asked_rate: float | None) -> Load | None:
        """The client operations completed while ``run`` ran, and the harness's CPU for
        them (None before ``run`` has ended)."""
        if self._span is None:
            return None
        start, end = self._span
        return Load(
            self.stats.completed,
            (end - start) / 1e9,
            asked_rate,
            self.cpu.runner_s,
            self.cpu.workers_s,
        )

    def _loop(self) -> None:
        while True:
            self._signals.raise_held()  # between two steps: nothing is left half done
            now = self.clock.now()
            since = self._unflushed_since
            if since is not None and now - since >= FLUSH_NS:
                self._flush()
            self._expire(now)
            if isinstance(self.gen, Replay):
                self._end_threads(self.gen.ended(now))
            if self._exhausted or self._stopping:
                if not self._open:
                    return
                by = self._stop_by
                if by is not None and now >= by:
                    self._stop_by = None
                    self._expire(now, every=True)
                    continue
                due = self._next_deadline(now)
                self._wait_events(due if by is None else min(due, by))
                continue
            if self._quieting(now):  # a quiet point is sought: nothing invoked till then
                assert self._quiet_until is not None
                self._wait_events(min(self._quiet_until, self._next_deadline(now)))
                continue
            # no thread free: nothing to invoke (with no thread left at all, a replay whose
            # every recording ended, the generator is asked: it says it is done)
            if self._threads and len(self._open) == len(self._threads):
                self._wait_events(self._next_deadline(now))
                continue
            req, nxt = self.gen.op(self._context(now))
            if req is None:
                self._exhausted = True
                continue
            if req is PENDING:
                self.gen = nxt
                self._wait_events(min(self._next_deadline(now), now + ns(0.01)))
                continue
            assert isinstance(req, Request)
            if req.time > now:
                due = min(req.time, self._next_deadline(now))
                if self._wait_events(due) or self._stopping:
                    continue  # an event came first: the generator is asked again
                if self.clock.now() < req.time:
                    continue
            self.gen = nxt
            invoke = self._invoke(req)
            self.gen = self.gen.update(self._context(invoke.time), invoke)

    def _end_threads(self, threads: frozenset[Thread]) -> None:
        """Stop the idle workers of ``threads``, whose recording ended: each closes its
        client (what it holds is let go, as when the recorded run ended) without holding
        up the loop; ``close`` waits for them."""
        for thread in threads:
            if thread in self._open or not isinstance(thread, int) or thread not in self._workers:
                continue
            w = self._workers.pop(thread)
            del self._thread_process[thread]
            self._threads_changed()
            self._holders.forget(w.process)
            w.close_client()
            self._ended.append(w)
            self._event(
                "worker-stopped",
                w.process,
                sent=self.clock.now(),
                reason="its recording ended (replay)",
            )
            log.info("process %s: its recording ended; its worker closes", w.process)

    def _thread_of(self, process: Any) -> Thread:
        if self._thread_process.get(process, _GONE) == process:  # the usual case: thread == process
            return process
        for t, p in self._thread_process.items():
            if p == process:
                return t
        raise RuntimeError(f"generator asked for process {process!r}, which no thread runs")

    def _invoke(self, req: Request) -> Op:
        thread = self._thread_of(req.process)
        if thread in self._open:
            raise RuntimeError(f"generator asked busy process {req.process!r} to invoke")
        if thread != NEMESIS:
            op, inv = self._open_op(thread, req)
            worker = self._workers[int(thread)]
            self._await(_channel(worker), thread)
            try:
                worker.send(inv)
            except (BrokenPipeError, OSError):
                pass  # a dead worker's pipe reads as EOF next: recorded as info there
            return op
        assert self._nemesis_thread is not None
        op = self._record(process=req.process, type="invoke", f=req.f, value=req.value, key=req.key)
        self._flush()  # the history is on disk up to the fault
        log.info("fault %s invoked at %.3f s: %r", req.f, _secs(op.time), req.value)
        self._open[thread] = _Open(op, None)
        self._await(self._nemesis_thread.conn.fileno(), thread)
        self._nemesis_thread.send(Invocation(req.f, req.value, req.key))
        return op

    def _open_op(self, thread: Thread, req: Request) -> tuple[Op, Invocation]:
        """Record a client thread's invocation and open its operation (before the
        request goes out)."""
        op = self._record(process=req.process, type="invoke", f=req.f, value=req.value, key=req.key)
        self._open[thread] = _Open(op, op.time + self.op_timeout_ns)
        self.stats.invoked += 1
        self._holders.follow(op)  # giving it up: no longer a fault's target
        return op, Invocation(req.f, req.value, req.key)

    def _thread_done(self, worker: ThreadWorker, done: Completion) -> Invocation | None:
        """A client thread's completion, handled in that thread (``ThreadWorker``'s
        ``Done``): recorded as the loop would; then, while the loop runs, the thread's
        next invocation when the generator's next request is its own and due (None: the
        loop, woken, decides). An error here is the loop's, raised there."""
        with self._lock:
            if self._closed:
                return None
            try:
                return self._thread_step(worker, done)
            except BaseException as e:
                self._failure = e
                self._bell.ring()
                return None

    def _thread_step(self, worker: ThreadWorker, done: Completion) -> Invocation | None:
        whose = self._waiting.pop(worker, None)
        if whose is None:
            return None  # a thread's answer after its run ended
        if isinstance(whose, _Abandoned):
            self._reap_abandoned(whose, done, returned=True)
            return None
        if not self._looping:
            return None  # the run was cut short (a signal, an error): its op stays open
        self._complete(whose, done)
        thread = whose
        if self._workers.get(int(thread)) is not worker:
            return None  # the thread retired (its op ended info)
        if self._stopping or self._exhausted or isinstance(self.gen, Replay):
            self._bell.ring()
            return None
        now = self.clock.now()
        since = self._unflushed_since
        if since is not None and now - since >= FLUSH_NS:
            self._flush()
        if self._quiet_until is None and now >= self._quiet_at:
            self._quiet_until = now + QUIET_MAX_NS
            self._bell.ring()  # the loop, asleep maybe till a later timeout, ends it in time
        if self._quieting(now):
            return None  # held till every open operation completed (the loop invokes it)
        req, nxt = self.gen.op(self._context(now))
        if not isinstance(req, Request) or req.time > now:
            self._bell.ring()  # done, pending or not yet due: the loop waits for it
            return None
        if self._thread_process.get(thread, _GONE) != req.process:
            self._bell.ring()  # another thread's: the loop invokes it
            return None
        self.gen = nxt
        op, inv = self._open_op(thread, req)
        self._await(worker, thread)
        self.gen = self.gen.update(self._context(op.time), op)
        return inv

    def _await(self, on: int | ThreadWorker, whose: Thread | _Abandoned) -> None:
        """Wait on ``on`` (a file descriptor, or a client thread, whose answers come
        through ``Answers``) from now on, for ``whose`` answer."""
        self._waiting[on] = whose
        if isinstance(on, int):
            self._poll.register(on, _READABLE)

    def _unawait(self, on: int | ThreadWorker) -> None:
        if self._waiting.pop(on, None) is not None and isinstance(on, int):
            self._poll.unregister(on)

    def _next_deadline(self, now: int) -> int:
        """The earliest timeout of an open op: the oldest client op's, as all have the
        same ``op_timeout`` and ``_open`` is in invocation order; else 50 ms from now."""
        for o in self._open.values():
            if o.deadline is not None:
                return o.deadline
        return now + ns(0.05)

    def _wait_events(self, until: int) -> bool:
        """Wait for completions until ``until`` (run clock), or until the ops recorded
        are due to be written; True if any arrived."""
        if self._unflushed_since is not None:
            until = min(until, self._unflushed_since + FLUSH_NS)
        timeout_ms = max(0, min((until - self.clock.now() + 999_999) // 1_000_000, 250))
        ready, got = self._poll_unlocked(timeout_ms)
        bell = self._bell
        for fd, _ in ready:
            whose = self._waiting.get(fd)
            if whose is None:
                if fd == bell.fileno():
                    bell.drain()
                    got = True
                continue  # else answered already in this round (an abandoned worker reaped)
            if isinstance(whose, _Abandoned):
                self._unawait(fd)
                self._reap_abandoned(whose, self._late(whose.worker))
                continue
            done = self._receive(whose)
            self._unawait(fd)
            self._complete(whose, done)
            got = True
        return got

    def _quieting(self, now: int) -> bool:
        """Whether a quiet point is sought (``QUIET_EVERY_NS``) and not reached yet: a
        client operation still open, and its time not over. Reached or over, the next is
        sought ``QUIET_EVERY_NS`` later, and the loop, woken, invokes the threads held."""
        until = self._quiet_until
        if until is None:
            return False
        if now < until and len(self._open) > (NEMESIS in self._open):
            return True
        self._quiet_until = None
        self._quiet_at = now + QUIET_EVERY_NS
        self._bell.ring()
        return False

    def _poll_unlocked(self, timeout_ms: int) -> tuple[list[tuple[int, int]], bool]:
        """Poll for ``timeout_ms`` with the runner's lock let go (the client threads
        step meanwhile): what is ready, and whether a client thread completed an
        operation meanwhile (the generator changed under the wait); what a thread
        raised is raised here."""
        changes = self._changes
        self._bell.asleep = True
        self._lock.release()
        try:
            ready = self._poll.poll(timeout_ms)
        finally:
            self._lock.acquire()
        self._bell.asleep = False
        if self._failure is not None:
            raise self._failure
        return ready, changes != self._changes

    def _receive(self, thread: Thread) -> Completion:
        """The completion ``thread``'s worker (or the nemesis) sent."""
        try:
            if thread == NEMESIS:
                assert self._nemesis_thread is not None
                return conns_recv(self._nemesis_thread.conn)
            worker = self._workers[int(thread)]
            assert isinstance(worker, Worker)  # a thread's comes through ``Answers``
            return worker.recv()
        except (EOFError, OSError):
            return Completion("info", error="worker process died mid-operation")

    @staticmethod
    def _late(worker: AnyWorker) -> Completion | None:
        """An abandoned worker process's late completion; None: it died."""
        assert isinstance(worker, Worker)
        try:
            return worker.recv()
        except (EOFError, OSError):
            return None

    def _reap_abandoned(
        self, a: _Abandoned, late: Completion | None, returned: bool = False
    ) -> None:
        """An abandoned worker's operation returned (``late``; None: its worker died):
        record it, then stop the worker (``returned``: said by its own thread, which
        ends once this returns)."""
        if late is not None:
            log.info("late completion from abandoned process %s: %r", a.worker.process, late)
            self._event(
                "late-completion",
                a.worker.process,
                f=a.invoke.f,
                key=a.invoke.key,
                invoked=a.invoke.time,
                type=late.type,
                value=late.value if late.value is not None else a.invoke.value,
                error=late.error,
                node=late.node,
            )
        self._abandoned.remove(a)
        self._stop_abandoned(a, timeout=0.5, returned=returned)

    def _stop_abandoned(self, a: _Abandoned, timeout: float, returned: bool = False) -> None:
        sent = self.clock.now()
        self.cpu.worker_stopping(a.worker.pid)
        a.worker.stop(timeout=timeout)
        reason = "abandoned after its operation ended info"
        if isinstance(a.worker, ThreadWorker) and a.worker.running and not returned:
            reason += (
                "; a client thread, which cannot be killed: it may still be running, "
                "and closes its client once its operation returns"
            )
        self._event("worker-stopped", a.worker.process, sent=sent, reason=reason)

    def _event(self, event: str, process: Any, **fields: Any) -> None:
        if self._events is not None:
            self._events.append(
                {"time": self.clock.now(), "process": process, "event": event, **fields}
            )

    def _complete(self, thread: Thread, done: Completion) -> None:
        opened = self._open.pop(thread)
        self._changes += 1
        inv = opened.invoke
        op = self._record(
            process=inv.process,
            type=done.type,
            f=inv.f,
            value=done.value if done.value is not None else inv.value,
            key=inv.key,
            error=done.error,
            node=done.node,
        )
        if thread == NEMESIS:
            self._track_fault(op)
        else:
            self._count(op)
            if op.node is not None:
                self._nodes[thread] = op.node
        self.gen = self.gen.update(self._context(op.time), op)
        if thread != NEMESIS and op.type == "info":
            self._retire(int(thread), inv)

    def _count(self, op: Op) -> None:
        self._holders.follow(op)
        if op.type == "ok":
            self.stats.ok += 1
        elif op.type == "fail":
            self.stats.fail += 1
        else:
            self.stats.info += 1

    def _track_fault(self, op: Op) -> None:
        outcome = {"ok": "took effect", "fail": "did not take effect"}.get(op.type, "unknown")
        log.info(
            "fault %s %s at %.3f s%s: %r%s",
            op.f,
            outcome,
            _secs(op.time),
            f" on {op.node}" if op.node else "",
            op.value,
            f" ({op.error})" if op.error else "",
        )
        name = op.f.removeprefix("start-").removeprefix("stop-")
        if op.f.startswith("start-") and op.type == "ok":
            self.stats.active_faults[name] = op.time
        elif op.f.startswith("stop-") or op.f.startswith("heal"):
            self.stats.active_faults.pop(name, None)

    def _retire(self, thread: int, invoke: Op) -> None:
        """The process's op ended ``info``: abandon its worker, start a fresh one under a
        new process id."""
        old = self._workers.pop(thread)
        abandoned = _Abandoned(old, invoke)
        self._abandoned.append(abandoned)
        self._await(_channel(old), abandoned)
        log.warning(
            "process %s: %s invoked at %.3f s ended info; its worker is abandoned (what it "
            "does next is recorded%s) and process %s takes its thread",
            old.process,
            invoke.f,
            _secs(invoke.time),
            "; a client thread cannot be killed: it may still be running"
            if isinstance(old, ThreadWorker)
            else "",
            old.process + self.concurrency,
        )
        self._spawn(thread, old.process + self.concurrency)

    def _expire(self, now: int, every: bool = False) -> None:
        """Complete as ``info`` every op open past its deadline: the oldest first, up
        to the first one still within it (the later ones were invoked after it); with
        ``every``, each client op open (a stop's grace is over)."""
        expired = []
        for thread, o in self._open.items():
            if o.deadline is None:
                continue
            if now < o.deadline and not every:
                break
            expired.append(thread)
        for thread in expired:
            self._complete(thread, Completion("info", error="timed out"))


_GONE: Any = object()


def _channel(worker: AnyWorker) -> int | ThreadWorker:
    """What a worker's answers come on: its pipe's end, or (a client thread) the thread,
    through the run's ``Answers``."""
    return worker if isinstance(worker, ThreadWorker) else worker.fileno()


def _secs(t: int) -> float:
    """A run-clock time (ns) in seconds since the run's clock started."""
    return t / 1e9


def conns_recv(c: Any) -> Completion:
    """Receive one completion from a worker's or the nemesis's pipe."""
    done: Completion = c.recv()
    return done
