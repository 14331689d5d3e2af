"""The generator model: contexts, requests, PENDING and the ``Generator`` protocol.

A generator is an immutable value that answers two questions (Jepsen's "new" generator
design, ``jepsen.generator``):

- ``op(ctx)``: given the current context, what should be invoked next? It returns
  ``(request, successor)``, ``(PENDING, successor)`` or ``(None, self)`` when exhausted.
  ``successor`` is the generator that results *if* the answer is acted upon.
- ``update(ctx, event)``: an operation was invoked or completed; return the generator that
  reflects it.

Neither call mutates anything. All randomness is an integer state carried inside the
generator values and advanced deterministically (splitmix64), never a global RNG, so the
same seed and the same sequence of contexts always yield the same requests.

Runner contract (``core.gen.simulate`` implements exactly this, in memory):

1. The runner calls ``op(ctx)`` with a ``Context`` describing *now*.
2. On a ``Request`` it waits until ``request.time``. If an event (a completion) arrives
   first, it discards the request **and** its successor, passes the event to ``update()`` of
   the generator it asked, and asks again. Otherwise it invokes the request on the thread
   of ``request.process`` (which must be free: ``check_request`` raises if not) and keeps
   the successor. ``op()`` is pure: the same context gives the same answer, so re-asking is
   always safe.
3. On ``PENDING`` it keeps the successor (it may carry bookkeeping such as the time a
   ``sleep`` started), waits for an event or about 10 ms, and asks again.
   While no thread at all is free it may skip asking (nothing could be invoked).
4. On ``None`` it stops asking and waits for the outstanding operations to finish.
   Exhaustion is final.
5. Every invocation and every completion is passed to ``update(ctx, event)`` where
   ``ctx.time`` is the event's time, ``free_threads`` is the state *after* the event (an
   invoked thread is busy, a completed thread free) and ``thread_process`` still maps the
   thread to the event's process. After a client op completes ``info`` the runner gives
   that thread a new process id, visible from the next context on. The nemesis thread is
   never retired.

Threads are stable worker slots: ``0..n-1`` for clients, ``"nemesis"`` for faults. A
process is the logical id of whoever runs on a thread right now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeAlias, runtime_checkable

from core.ops import NEMESIS, Op

Thread: TypeAlias = int | str
Process: TypeAlias = int | str

NS_PER_S: Final = 1_000_000_000


class GeneratorError(Exception):
    """A generator broke the contract: it emitted for a busy or unknown process, was built
    from something that is not a generator, or can never make progress."""


def to_ns(seconds: float) -> int:
    """Seconds to integer nanoseconds (the unit of every time in this package)."""
    return round(seconds * NS_PER_S)


# --------------------------------------------------------------------------------------
# Context, Request, PENDING


def is_client(thread: Thread) -> bool:
    """Client threads are ints; the nemesis (and any other special worker) is a string."""
    return thread.__class__ is int


_set = object.__setattr__


@dataclass(frozen=True, slots=True, init=False)
class Context:
    """What a generator may know about *now*.

    ``thread_process`` maps every thread of the run to its current process. ``scope``,
    when set, is the set of threads a generator may use: ``clients()``, ``nemesis()`` and
    ``each_thread()`` narrow it; None means every thread of ``thread_process`` (a runner
    may pass that set explicitly, which saves rebuilding it). ``free_threads`` is always
    within the scope. The full ``thread_process`` stays visible so that events of any
    thread can be routed.

    The private fields are memos of derived values, computed at most once per context and
    never observable; they keep the helpers cheap when many generators look at one context.
    """

    time: int
    free_threads: frozenset[Thread]
    thread_process: Mapping[Thread, Process]
    scope: frozenset[Thread] | None
    _all: frozenset[Thread] | None = field(repr=False, compare=False)
    _targets: tuple[Thread, ...] | None = field(repr=False, compare=False)
    _inverse: dict[Process, Thread] | None = field(repr=False, compare=False)

    def __init__(
        self,
        time: int,
        free_threads: frozenset[Thread],
        thread_process: Mapping[Thread, Process],
        scope: frozenset[Thread] | None = None,
    ) -> None:
        # Hand-written (rather than dataclass-generated) because contexts are built for every
        # op, several times: this is ~40% cheaper. Still frozen: no other code sets fields.
        _set(self, "time", time)
        _set(self, "free_threads", free_threads)
        _set(self, "thread_process", thread_process)
        _set(self, "scope", scope)
        _set(self, "_all", scope)
        _set(self, "_targets", None)
        _set(self, "_inverse", None)

    @classmethod
    def initial(cls, clients: int, *, nemesis: bool = True, time: int = 0) -> Context:
        """The context of a run's start: every thread free, process = thread."""
        threads: list[Thread] = list(range(clients))
        if nemesis:
            threads.append(NEMESIS)
        return cls(time, frozenset(threads), {t: t for t in threads}, frozenset(threads))

    @property
    def all_threads(self) -> frozenset[Thread]:
        """Every thread in scope, busy or free."""
        a = self._all
        if a is None:
            a = frozenset(self.thread_process)
            _set(self, "_all", a)
        return a

    @property
    def client_threads(self) -> frozenset[Thread]:
        """Client threads (ints) in scope."""
        return frozenset(t for t in self.all_threads if is_client(t))

    @property
    def free_targets(self) -> tuple[Thread, ...]:
        """Free threads an op template may be sent to, sorted: the free client threads,
        or, in a scope without client threads (``nemesis(...)``), the free other threads."""
        t = self._targets
        if t is None:
            free = self.free_threads
            clients: list[int] = [x for x in free if x.__class__ is int]
            if clients:
                clients.sort()
                t = tuple(clients)
            elif any(x.__class__ is int for x in self.all_threads):
                t = ()
            else:
                t = tuple(sorted(free, key=str))
            _set(self, "_targets", t)
        return t

    def free_processes(self) -> frozenset[Process]:
        """Processes of the free threads in scope."""
        tp = self.thread_process
        return frozenset(tp[t] for t in self.free_threads)

    def process_thread(self, process: Process) -> Thread | None:
        """The thread currently running ``process`` (any thread, in scope or not), or None
        for a retired or unknown process."""
        tp = self.thread_process
        if tp.get(process, _MISSING) == process:  # the usual case: process id == thread id
            return process
        inv = self._inverse
        if inv is None:
            inv = {p: t for t, p in tp.items()}
            _set(self, "_inverse", inv)
        return inv.get(process)

    def is_free(self, process: Process) -> bool:
        """Whether ``process`` is current and its thread free (and in scope)."""
        t = self.process_thread(process)
        return t is not None and t in self.free_threads

    def restrict(self, threads: Iterable[Thread]) -> Context:
        """The same moment seen by a generator that may only use ``threads``."""
        scope = frozenset(threads) & self.all_threads
        return Context(self.time, self.free_threads & scope, self.thread_process, scope)

    def with_time(self, time: int) -> Context:
        return Context(time, self.free_threads, self.thread_process, self.scope)


_MISSING: Final = object()


@dataclass(frozen=True, slots=True)
class Request:
    """An operation to invoke on ``process``'s thread, not before ``time`` (ns since the
    run start; a time in the past means now)."""

    process: Process
    f: str
    value: Any = None
    key: Any = None
    time: int = 0

    def at(self, time: int) -> Request:
        """A copy with another time."""
        return Request(self.process, self.f, self.value, self.key, time)


class Pending:
    """The type of ``PENDING``: nothing to invoke now; ask again after the next event or a
    short wait."""

    _instance: Pending | None = None

    def __new__(cls) -> Pending:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "PENDING"

    def __reduce__(self) -> str:
        return "PENDING"


PENDING: Final = Pending()


@runtime_checkable
class Generator(Protocol):
    """An immutable schedule of operations. See the module docstring for the contract."""

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Generator]:
        """The next request (or PENDING, or None when exhausted) and the successor."""
        ...

    def update(self, ctx: Context, event: Op) -> Generator:
        """The generator after ``event`` (an invocation or completion) happened."""
        ...


@runtime_checkable
class Seedable(Protocol):
    """Optional ability: a copy of this generator whose randomness derives from ``seed``.

    Every generator of this package implements it; a user generator without randomness
    need not. ``seeded()`` applies it to a whole tree."""

    def reseed(self, seed: int) -> Generator: ...


def reseed(gen: Generator, seed: int) -> Generator:
    """``gen.reseed(seed)`` when ``gen`` is ``Seedable``, else ``gen`` unchanged."""
    f = getattr(gen, "reseed", None)
    return f(seed) if f is not None else gen


def check_request(ctx: Context, req: Request) -> None:
    """Raise ``GeneratorError`` unless ``req`` targets a current process whose thread is
    free. The runner and ``simulate`` call this on every request they are about to invoke."""
    t = ctx.process_thread(req.process)
    if t is None:
        raise GeneratorError(
            f"generator emitted {req!r} for process {req.process!r}, which no thread runs "
            "(retired after an info, or never existed); emit only for ctx.free_processes()"
        )
    if t not in ctx.free_threads:
        raise GeneratorError(
            f"generator emitted {req!r} for process {req.process!r}, whose thread {t!r} is "
            "busy; a generator may only emit for a free process (ctx.free_processes())"
        )


Answer: TypeAlias = tuple[Request | Pending | None, Any]
"""What ``op()`` returns: a request, PENDING or None, and the successor."""
