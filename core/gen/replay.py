"""Replay: a recorded run's invocations again, each on its thread, at its recorded time.

``Replay`` emits the invocations it is given, in their order on each thread (a client
slot, or the nemesis), each not before its time after ``start``. It never reorders a
thread's ops: when a thread is still busy at its next op's time (the service answered
later than it did in the recording), that op waits for it, and the other threads go on.
Which process a thread runs is the runner's (a process whose op ended ``info`` gets a new
one, as in the recording when the same op ended so): a fault recorded against a client
process (``victim``) is aimed at whichever process runs that process's thread now, and
at the same moment of that thread's work: once the thread has begun the op it was in
when the fault hit it (``during``), as far into it as then (``into``). Each
client thread ends where its recording ended (``ends``): once its last op is done and
that time has come, ``ended`` names it and the runner stops its worker.

Ops that raced in the recording (two threads asking for one lock within moments of each
other) were decided by which reached the service first, a matter of milliseconds the
replay cannot reproduce by time alone; an op that must reach the service after another
thread's (``follows``: the lock was granted to that one first) is issued ``FOLLOW_GAP``
after it, or ``FOLLOW_WAIT`` after its own time when that one is not issued by then.

A holder's work (``catch_up``: a lock holder's critical section, whose length is the
client's own, not the service's) issued late because its thread was held is told how late
(``BEHIND`` in its value, seconds): the client shortens its work by as much, so what it
sends the service next (its write, its release) is back on the recorded schedule, rather
than every later op of the thread inheriting the delay. A fault aimed into such an op
aims at the recorded moment of it, not as far into the shortened op as then.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from core.gen.context import PENDING, Context, Pending, Request, Thread
from core.ops import Op

FOLLOW_GAP = 20_000_000
"""Ns an op that follows another thread's op is issued after it: more than a worker's
own jitter in sending it."""
FOLLOW_WAIT = 50_000_000
"""Ns after its own time an op stops waiting for the op it follows to be issued."""
BEHIND: Final = "behind_s"
"""The key of a holder's work invocation's value that says how late (s) a replay issued
it: the client shortens its work by as much (``workloads.holder``)."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded invocation: its thread, its time after the workload's start (ns)."""

    thread: Thread
    at: int
    f: str
    value: Any = None
    key: Any = None
    victim: Thread | None = None
    """A fault aimed at the client thread it hit in the recording: issued with that
    thread's process now as its ``target``."""
    during: int | None = None
    """The victim thread's op (its 0-based invocation) the fault hit it in; None: idle."""
    into: int = 0
    """How long after that op's invocation the fault took effect (ns)."""
    after: int | None = None
    """For a fault: how long after its thread's previous op completed it was invoked (a
    fault lasts its time from when it took effect); None: its recorded time only."""
    follows: tuple[tuple[Thread, int], ...] = ()
    """Other threads' ops (thread, its 0-based invocation) this one must be issued after:
    they raced for what this one asked for, and won in the recording."""
    catch_up: bool = False
    """A holder's work, told how late it is issued (``BEHIND``) to shorten itself."""


@dataclass(frozen=True, slots=True)
class Replay:
    """The generator of recorded invocations (see the module docstring): ``queues[i]``
    holds the invocations of ``threads[i]`` in order, ``done[i]`` how many were invoked.
    ``start`` is the run-clock time (ns) the recorded times count from; None: the time of
    the first ``op()``, less ``first`` (the recording's first invocation, so that it is
    issued at once and every other keeps its distance to it)."""

    threads: tuple[Thread, ...]
    queues: tuple[tuple[Recorded, ...], ...]
    index: Mapping[Thread, int]
    done: tuple[int, ...]
    start: int | None = None
    first: int = 0
    ends: Mapping[Thread, int] | None = None
    """When each thread's recording ended (ns, counted as ``at``): none when not given."""
    since: Mapping[Thread, int] | None = None
    """When each thread invoked its latest op (run clock)."""
    freed: Mapping[Thread, int] | None = None
    """When each thread's latest op completed (run clock)."""
    behind: Mapping[Thread, int] | None = None
    """How late (ns) each thread's latest op was issued when it was told to catch up."""

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Any]:
        if self.start is None:
            anchored = replace(self, start=ctx.time - self.first)
            return anchored.op(ctx)[0], anchored
        best: tuple[int, Thread, Recorded] | None = None
        waiting = False
        for thread, queue, i in zip(self.threads, self.queues, self.done, strict=True):
            if i >= len(queue) or thread not in ctx.all_threads:
                continue
            due = self._due(queue[i], ctx)
            if thread not in ctx.free_threads or due is None:
                waiting = True
            elif best is None or due < best[0]:
                best = (due, thread, queue[i])
        if best is None:
            return (PENDING if waiting else None), self
        due, thread, r = best
        value = r.value
        if r.catch_up and isinstance(value, dict) and ctx.time > due:
            value = {**value, BEHIND: round((ctx.time - due) / 1e9, 6)}
        if r.victim is not None and r.victim in ctx.thread_process and isinstance(value, dict):
            value = {**value, "target": ctx.thread_process[r.victim]}
        return Request(ctx.thread_process[thread], r.f, value, r.key, due), self

    def _due(self, r: Recorded, ctx: Context) -> int | None:
        """When ``r`` is due: its recorded time; for a fault aimed at a thread's op, not
        before that thread has begun that op and is as far into it as it was (None: it has
        not begun it yet, and still may)."""
        assert self.start is not None
        due = self.start + r.at
        if r.after is not None and self.freed and r.thread in self.freed:
            due = max(due, self.freed[r.thread] + r.after)
        for thread, k in r.follows:
            i = self.index.get(thread)
            if i is None or thread not in ctx.all_threads:
                continue
            if self.done[i] <= k:  # not issued yet: wait for it, a little
                due = max(due, self.start + r.at + FOLLOW_WAIT)
            elif self.done[i] == k + 1 and self.since and thread in self.since:
                due = max(due, self.since[thread] + FOLLOW_GAP)
        if r.victim is None or r.during is None or r.victim not in self.index:
            return due
        i = self.index[r.victim]
        if self.done[i] <= r.during:
            return None if r.victim in ctx.all_threads else due
        if self.done[i] == r.during + 1 and self.since and r.victim in self.since:
            caught_up = (self.behind or {}).get(r.victim, 0)
            return max(due, self.since[r.victim] + r.into - caught_up)
        return due

    def ended(self, now: int) -> frozenset[Thread]:
        """The threads whose recording has ended by ``now`` (run clock) and that have
        invoked all of theirs: the runner stops their workers, as the recording's run
        stopped them, letting go of what they held."""
        if self.ends is None or self.start is None:
            return frozenset()
        return frozenset(
            t
            for t, queue, i in zip(self.threads, self.queues, self.done, strict=True)
            if i >= len(queue) and t in self.ends and now >= self.start + self.ends[t]
        ) | frozenset(
            t for t, at in self.ends.items() if t not in self.index and now >= self.start + at
        )

    def update(self, ctx: Context, event: Op) -> Any:
        if event.type != "invoke":
            thread = ctx.process_thread(event.process)
            if thread is None:
                return self
            return replace(self, freed={**(self.freed or {}), thread: event.time})
        i = self.index.get(ctx.process_thread(event.process), -1)  # type: ignore[arg-type]
        if (
            i < 0
            or self.done[i] >= len(self.queues[i])
            or self.queues[i][self.done[i]].f != event.f
        ):
            return self  # not one of ours
        since = {**(self.since or {}), self.threads[i]: event.time}
        done = (*self.done[:i], self.done[i] + 1, *self.done[i + 1 :])
        late = event.value.get(BEHIND, 0) if isinstance(event.value, dict) else 0
        behind = {**(self.behind or {}), self.threads[i]: int(float(late) * 1e9)}
        return replace(self, done=done, since=since, behind=behind)

    def reseed(self, seed: int) -> Replay:
        """Nothing random to reseed: the recording decides everything."""
        return self


def replay(
    recorded: Iterable[Recorded],
    start: int | None = None,
    first: int = 0,
    ends: Mapping[Thread, int] | None = None,
) -> Replay:
    """The generator of ``recorded`` invocations (in time order per thread), each not
    before ``start + at`` ns on the run clock (``Replay``: ``start`` None counts from the
    first ``op()``, ``first`` ns earlier; ``ends``: when each thread's recording ended)."""
    queues: dict[Thread, list[Recorded]] = {}
    for r in sorted(recorded, key=lambda r: r.at):
        queues.setdefault(r.thread, []).append(r)
    threads = tuple(queues)
    return Replay(
        threads,
        tuple(tuple(queues[t]) for t in threads),
        {t: i for i, t in enumerate(threads)},
        (0,) * len(threads),
        start,
        first,
        ends,
    )
