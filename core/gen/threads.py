"""Threads and processes: ``each_thread`` (a copy of a generator per thread),
``on_threads`` / ``clients`` / ``nemesis`` and ``on_processes`` (a generator restricted
to some workers)."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.gen.choice import soonest
from core.gen.context import PENDING, Answer, Context, Process, Request, Thread, is_client, reseed
from core.gen.lift import EXHAUSTED, GenLike, as_gen
from core.gen.rng import derive_seed
from core.ops import NEMESIS, Op


def _salt(x: Thread | Process) -> int:
    """A stable int for a thread or process id (``hash()`` of a str varies per run)."""
    return x if isinstance(x, int) else zlib.crc32(str(x).encode())


@dataclass(frozen=True, slots=True)
class _Copy:
    process: Process
    gen: Any


@dataclass(frozen=True, slots=True)
class EachThread:
    """An independent copy of ``fresh`` per thread (client threads; special threads only in
    a scope without clients), each seeing a context reduced to its own thread. Copies are
    made on first use, seeded from (seed, process). With ``restart`` a thread whose process
    changed (retired after an info) starts a new copy. Each op is the soonest request among
    the free threads' copies (ties at random, seeded). Exhausted when every thread's copy is."""

    fresh: Any
    restart: bool = True
    seed: int = 0
    copies: dict[Thread, _Copy] = field(default_factory=dict)
    state: int = 0

    def _copy(self, thread: Thread, process: Process) -> _Copy:
        c = self.copies.get(thread)
        if c is not None and not (self.restart and c.process != process):
            return c
        salt = _salt(process) if self.restart else _salt(thread)
        return _Copy(process, reseed(self.fresh, derive_seed(self.seed, salt)))

    def _threads(self, ctx: Context) -> frozenset[Thread]:
        a = ctx.all_threads
        clients = frozenset(t for t in a if is_client(t))
        return clients if clients else a

    def op(self, ctx: Context) -> Answer:
        tp = ctx.thread_process
        new: dict[Thread, _Copy] = {}
        cands: list[tuple[int, int, Request, Any]] = []
        pending = False
        for t in ctx.free_targets:
            c = self._copy(t, tp[t])
            sub = Context(ctx.time, frozenset((t,)), tp, frozenset((t,)))
            r, g = c.gen.op(sub)
            if r is None:
                if c.gen is not EXHAUSTED:
                    new[t] = _Copy(c.process, EXHAUSTED)
            elif r is PENDING:
                pending = True
                if c is not self.copies.get(t) or g is not c.gen:
                    new[t] = _Copy(c.process, g)
            else:
                if c is not self.copies.get(t):
                    new[t] = c
                cands.append((r.time, len(cands), r, (t, _Copy(c.process, g))))
        state = self.state
        # A future request waits (PENDING) while another copy is PENDING: see AnyOf.
        if cands and not (pending and min(c[0] for c in cands) > ctx.time):
            j, state = soonest(cands, state)
            r, (t, c2) = cands[j][2], cands[j][3]
            new[t] = c2
            return r, EachThread(self.fresh, self.restart, self.seed, {**self.copies, **new}, state)
        copies = {**self.copies, **new} if new else self.copies
        for t in self._threads(ctx):
            cur = copies.get(t)
            if cur is None or cur.gen is not EXHAUSTED:
                break
            if self.restart and cur.process != tp[t]:
                break
        else:
            return None, EXHAUSTED
        if not new:
            return PENDING, self
        return PENDING, EachThread(self.fresh, self.restart, self.seed, copies, state)

    def update(self, ctx: Context, event: Op) -> Any:
        t = ctx.process_thread(event.process)
        if t is None:
            return self
        c = self.copies.get(t)
        if c is None or c.process != event.process:
            return self
        sub = Context(ctx.time, ctx.free_threads & {t}, ctx.thread_process, frozenset((t,)))
        g = c.gen.update(sub, event)
        if g is c.gen:
            return self
        copies = {**self.copies, t: _Copy(c.process, g)}
        return EachThread(self.fresh, self.restart, self.seed, copies, self.state)

    def reseed(self, seed: int) -> Any:
        return EachThread(self.fresh, self.restart, derive_seed(seed, 1), {}, derive_seed(seed, 0))


def each_thread(g: GenLike, *, restart_on_new_process: bool = True) -> EachThread:
    """An independent copy of ``g`` for every client thread, e.g. a per-process cycle
    ``each_thread(cycle([once(acquire), once(write), once(release)]))``. By default a thread
    that got a new process (after an ``info``) starts over with a fresh copy, since the new
    process holds nothing; pass ``restart_on_new_process=False`` to continue the old copy."""
    return EachThread(as_gen(g), restart_on_new_process)


@functools.lru_cache(maxsize=512)
def _threads_where(pred: Callable[[Thread], bool], threads: frozenset[Thread]) -> frozenset[Thread]:
    """The threads satisfying ``pred`` (memoized: a pure function of a fixed thread set)."""
    return frozenset(t for t in threads if pred(t))


@dataclass(frozen=True, slots=True)
class OnThreads:
    """``gen`` restricted to the threads satisfying ``pred``; it only sees events of those
    threads."""

    pred: Callable[[Thread], bool]
    gen: Any

    def _sub(self, ctx: Context) -> Context:
        scope = _threads_where(self.pred, ctx.all_threads)
        return Context(ctx.time, ctx.free_threads & scope, ctx.thread_process, scope)

    def op(self, ctx: Context) -> Answer:
        r, g = self.gen.op(self._sub(ctx))
        if r is None:
            return None, EXHAUSTED
        return r, (self if g is self.gen else OnThreads(self.pred, g))

    def update(self, ctx: Context, event: Op) -> Any:
        t = ctx.process_thread(event.process)
        if t is None or not self.pred(t):
            return self
        g = self.gen.update(self._sub(ctx), event)
        return self if g is self.gen else OnThreads(self.pred, g)

    def reseed(self, seed: int) -> Any:
        return OnThreads(self.pred, reseed(self.gen, seed))


def on_threads(pred: Callable[[Thread], bool], g: GenLike) -> OnThreads:
    """``g`` may only use threads ``t`` with ``pred(t)``."""
    return OnThreads(pred, as_gen(g))


def _is_nemesis(t: Thread) -> bool:
    return t == NEMESIS


def clients(g: GenLike) -> OnThreads:
    """``g`` on the client threads only."""
    return OnThreads(is_client, as_gen(g))


def nemesis(g: GenLike) -> OnThreads:
    """``g`` on the nemesis thread only (templates inside go to the nemesis)."""
    return OnThreads(_is_nemesis, as_gen(g))


@dataclass(frozen=True, slots=True)
class OnProcesses:
    """``gen`` restricted to the threads whose current process satisfies ``pred``; it only
    sees events of such processes."""

    pred: Callable[[Process], bool]
    gen: Any

    def _sub(self, ctx: Context) -> Context:
        tp, pred = ctx.thread_process, self.pred
        return ctx.restrict([t for t in ctx.all_threads if pred(tp[t])])

    def op(self, ctx: Context) -> Answer:
        r, g = self.gen.op(self._sub(ctx))
        if r is None:
            return None, EXHAUSTED
        return r, (self if g is self.gen else OnProcesses(self.pred, g))

    def update(self, ctx: Context, event: Op) -> Any:
        if not self.pred(event.process):
            return self
        g = self.gen.update(self._sub(ctx), event)
        return self if g is self.gen else OnProcesses(self.pred, g)

    def reseed(self, seed: int) -> Any:
        return OnProcesses(self.pred, reseed(self.gen, seed))


def on_processes(pred: Callable[[Process], bool], g: GenLike) -> OnProcesses:
    """``g`` may only use threads whose current process ``p`` has ``pred(p)``."""
    return OnProcesses(pred, as_gen(g))
