"""Timing: generators that pace another one (``time_limit``, ``stagger``, ``delay`` /
``rate``, ``at``) or wait (``sleep``).

Every combinator of this package is a frozen dataclass. ``op()`` and ``update()`` return new
values (or ``self`` when nothing changed) and never mutate. Arguments are lifted with
``as_gen``, so a dict, a function, a list or None may stand wherever a generator is expected.

Times are given in seconds and stored in integer nanoseconds. Combinators that need a start
time (``time_limit``, ``sleep``) take it from the first ``op()`` or ``update()`` they see,
whichever comes first, so that a discarded future request (see the runner contract in
``core.gen.context``) cannot postpone it indefinitely.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.gen.context import PENDING, Answer, Context, reseed, to_ns
from core.gen.lift import EXHAUSTED, GenLike, as_gen
from core.gen.rng import derive_seed, rng_float
from core.ops import Op


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """Ops of ``gen`` until ``limit`` ns after this generator started (its first ``op()`` or
    ``update()``). It ends at its deadline, not before: a request due at or after the
    deadline is not made, and the limit waits (PENDING) until the deadline to end. Ending
    early would start what comes after it early: the final heal of a fault whose stop is
    due after the deadline would cut the fault off the moment it took effect."""

    limit: int
    gen: Any
    deadline: int | None = None

    def op(self, ctx: Context) -> Answer:
        deadline = self.deadline if self.deadline is not None else ctx.time + self.limit
        if ctx.time >= deadline:
            return None, EXHAUSTED
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is not PENDING and r.time >= deadline:
            return PENDING, (
                self if deadline == self.deadline else replace(self, deadline=deadline)
            )
        return r, TimeLimit(self.limit, g, deadline)

    def update(self, ctx: Context, event: Op) -> Any:
        deadline = self.deadline if self.deadline is not None else ctx.time + self.limit
        g = self.gen.update(ctx, event)
        if g is self.gen and deadline == self.deadline:
            return self
        return TimeLimit(self.limit, g, deadline)

    def reseed(self, seed: int) -> Any:
        return TimeLimit(self.limit, reseed(self.gen, seed), self.deadline)


def time_limit(seconds: float, g: GenLike) -> TimeLimit:
    """Ops of ``g`` for ``seconds`` after it starts, then exhausted (in-flight ops are not
    cut short: put ``phases`` after it to wait for them)."""
    return TimeLimit(to_ns(seconds), as_gen(g))


@dataclass(frozen=True, slots=True)
class Stagger:
    """Ops of ``gen`` spaced by random gaps uniform in [0, ``max_gap``] ns (seeded); the
    first op is not delayed. Global across threads, not per thread."""

    max_gap: int
    gen: Any
    next_time: int | None = None
    state: int = 0

    def op(self, ctx: Context) -> Answer:
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is PENDING:
            if g is self.gen:
                return r, self
            return r, Stagger(self.max_gap, g, self.next_time, self.state)
        nt = self.next_time if self.next_time is not None else ctx.time
        t = r.time if r.time >= nt else nt
        u, state = rng_float(self.state)
        nxt = max(t, ctx.time) + int(u * self.max_gap)
        return (r if t == r.time else r.at(t)), Stagger(self.max_gap, g, nxt, state)

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else Stagger(self.max_gap, g, self.next_time, self.state)

    def reseed(self, seed: int) -> Any:
        return Stagger(self.max_gap, reseed(self.gen, derive_seed(seed, 0)), self.next_time, seed)


def stagger(seconds: float, g: GenLike) -> Stagger:
    """Ops of ``g`` at random intervals averaging ``seconds`` (uniform in 0..2*seconds)."""
    return Stagger(to_ns(2 * seconds), as_gen(g))


@dataclass(frozen=True, slots=True)
class Delay:
    """Ops of ``gen`` at least ``gap`` ns apart; the first op is not delayed. If ops fall
    behind (no free thread), spacing restarts from the late op: no burst to catch up."""

    gap: int
    gen: Any
    next_time: int | None = None

    def op(self, ctx: Context) -> Answer:
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is PENDING:
            return r, (self if g is self.gen else Delay(self.gap, g, self.next_time))
        nt = self.next_time if self.next_time is not None else ctx.time
        t = r.time if r.time >= nt else nt
        nxt = max(t, ctx.time) + self.gap
        return (r if t == r.time else r.at(t)), Delay(self.gap, g, nxt)

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else Delay(self.gap, g, self.next_time)

    def reseed(self, seed: int) -> Any:
        return Delay(self.gap, reseed(self.gen, seed), self.next_time)


def delay(seconds: float, g: GenLike) -> Delay:
    """Ops of ``g`` exactly ``seconds`` apart (when a thread is free)."""
    return Delay(to_ns(seconds), as_gen(g))


def rate(ops_per_second: float, g: GenLike) -> Delay:
    """Ops of ``g`` at ``ops_per_second`` in total across all its threads (evenly spaced);
    lower when threads are busy."""
    if ops_per_second <= 0:
        raise ValueError(f"rate needs ops_per_second > 0, not {ops_per_second}")
    return Delay(to_ns(1 / ops_per_second), as_gen(g))


@dataclass(frozen=True, slots=True)
class Sleep:
    """Nothing for ``duration`` ns after it starts (PENDING), then exhausted."""

    duration: int
    until: int | None = None

    def op(self, ctx: Context) -> Answer:
        until = self.until if self.until is not None else ctx.time + self.duration
        if ctx.time >= until:
            return None, EXHAUSTED
        return PENDING, (self if until == self.until else Sleep(self.duration, until))

    def update(self, ctx: Context, event: Op) -> Any:
        if self.until is not None:
            return self
        return Sleep(self.duration, ctx.time + self.duration)

    def reseed(self, seed: int) -> Any:
        return self


def sleep(seconds: float) -> Sleep:
    """Emit nothing for ``seconds``, then be exhausted: ``[sleep(5), once(x)]`` is x after 5 s.
    The runner polls PENDING (~10 ms), so prefer ``at``/``delay`` for precise times."""
    return Sleep(to_ns(seconds))


@dataclass(frozen=True, slots=True)
class At:
    """The first op of ``gen``, not before ``time`` ns since the run start, then exhausted."""

    time: int
    gen: Any

    def op(self, ctx: Context) -> Answer:
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is PENDING:
            return r, (self if g is self.gen else At(self.time, g))
        if r.time < self.time:
            r = r.at(self.time)
        return r, EXHAUSTED

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else At(self.time, g)

    def reseed(self, seed: int) -> Any:
        return At(self.time, reseed(self.gen, seed))


def at(seconds: float, x: GenLike) -> At:
    """Emit the first op of ``x`` once, at ``seconds`` since the **run start** (ctx.time),
    or as soon as possible if that time has passed. Absolute on purpose: several ``at`` in a
    list or in ``any_of`` mean what they say (``nemesis(at(12, pause))``,
    ``nemesis(at(26, resume))``). For a time relative to a phase, use ``[sleep(s), once(x)]``."""
    return At(to_ns(seconds), as_gen(x))
