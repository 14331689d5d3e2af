"""Combinators: generators built from generators.

Every combinator is a frozen dataclass. ``op()`` and ``update()`` return new values (or
``self`` when nothing changed) and never mutate. Arguments are lifted with ``as_gen``, so a
dict, a function, a list or None may stand wherever a generator is expected.

Times are given in seconds and stored in integer nanoseconds. Combinators that need a start
time (``time_limit``, ``sleep``) take it from the first ``op()`` or ``update()`` they see,
whichever comes first, so that a discarded future request (see the runner contract in
``core.gen.core``) cannot postpone it indefinitely.
"""

from __future__ import annotations

import bisect
import functools
import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from core.gen.core import (
    EXHAUSTED,
    PENDING,
    Context,
    FnGen,
    GeneratorError,
    GenLike,
    Pending,
    Process,
    Request,
    Template,
    Thread,
    as_gen,
    derive_seed,
    is_client,
    reseed,
    rng_below,
    rng_float,
    rng_next,
    to_ns,
)
from core.ops import NEMESIS, Op

Answer = tuple[Request | Pending | None, Any]

_EMPTY_OUTSTANDING: Final[frozenset[Process]] = frozenset()


def _salt(x: Thread | Process) -> int:
    """A stable int for a thread or process id (``hash()`` of a str varies per run)."""
    return x if isinstance(x, int) else zlib.crc32(str(x).encode())


def _soonest(cands: list[tuple[int, int, Request, Any]], state: int) -> tuple[int, int]:
    """Index into ``cands`` (time, order, request, successor) of the earliest request, ties
    broken by a seeded draw; returns (index, next state)."""
    if len(cands) == 1:
        return 0, state
    best = min(c[0] for c in cands)
    tied = [i for i, c in enumerate(cands) if c[0] == best]
    if len(tied) == 1:
        return tied[0], state
    k, state = rng_below(state, len(tied))
    return tied[k], state


def _update_all(gens: tuple[Any, ...], ctx: Context, event: Op) -> tuple[Any, ...] | None:
    """``event`` passed to every generator of ``gens``: the new tuple, or None when none of
    them changed."""
    new: list[Any] | None = None
    for i, g in enumerate(gens):
        g2 = g.update(ctx, event)
        if g2 is not g:
            if new is None:
                new = list(gens)
            new[i] = g2
    return None if new is None else tuple(new)


# --------------------------------------------------------------------------------------
# Counting


@dataclass(frozen=True, slots=True)
class Limit:
    """At most ``remaining`` ops from ``gen``, then exhausted."""

    remaining: int
    gen: Any

    def op(self, ctx: Context) -> Answer:
        if self.remaining <= 0:
            return None, EXHAUSTED
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is PENDING:
            return r, (self if g is self.gen else Limit(self.remaining, g))
        return r, Limit(self.remaining - 1, g)

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else Limit(self.remaining, g)

    def reseed(self, seed: int) -> Any:
        return Limit(self.remaining, reseed(self.gen, seed))


def limit(n: int, g: GenLike) -> Limit:
    """At most ``n`` operations from ``g``."""
    if n < 0:
        raise ValueError(f"limit needs n >= 0, not {n}")
    return Limit(n, as_gen(g))


def once(x: GenLike) -> Limit:
    """Only the first operation of ``x`` (``once({"f": "read"})`` is one read)."""
    return Limit(1, as_gen(x))


@dataclass(frozen=True, slots=True)
class Repeat:
    """Jepsen's ``repeat``: asks the *original* ``gen`` every time and emits its first op,
    ``remaining`` times (None: forever). Each repetition reseeds ``gen`` from an advancing
    state, so random values differ between repetitions."""

    gen: Any
    remaining: int | None = None
    state: int = 0

    def op(self, ctx: Context) -> Answer:
        if self.remaining is not None and self.remaining <= 0:
            return None, EXHAUSTED
        r, _ = reseed(self.gen, self.state).op(ctx)
        if r is None:
            return None, EXHAUSTED
        if r is PENDING:
            return r, self
        rem = None if self.remaining is None else self.remaining - 1
        return r, Repeat(self.gen, rem, rng_next(self.state)[1])

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else Repeat(g, self.remaining, self.state)

    def reseed(self, seed: int) -> Any:
        return Repeat(self.gen, self.remaining, seed)


def repeat(x: GenLike, n: int | None = None) -> Any:
    """The first op of ``x`` again and again: forever, or ``n`` times. A dict or function
    already repeats forever, so ``repeat(dict, n)`` is ``limit(n, dict)``."""
    g = as_gen(x)
    if n is not None and n < 0:
        raise ValueError(f"repeat needs n >= 0 or None, not {n}")
    if isinstance(g, (Template, FnGen)):
        return g if n is None else Limit(n, g)
    return Repeat(g, n)


@dataclass(frozen=True, slots=True)
class Cycle:
    """``gen`` from its start again each time it is exhausted, ``times`` times in all (None:
    forever). Cycle ``k`` runs ``gen`` reseeded with ``derive_seed(seed, k)``. A cycle that
    ends without emitting anything ends the whole ``Cycle`` (instead of spinning)."""

    gen: Any
    times: int | None = None
    seed: int = 0
    k: int = 0
    current: Any = None
    emitted: bool = False

    def _done(self, k: int) -> bool:
        return self.times is not None and k >= self.times

    def op(self, ctx: Context) -> Answer:
        k, cur, emitted = self.k, self.current, self.emitted
        if cur is None:
            if self._done(k):
                return None, EXHAUSTED
            cur = reseed(self.gen, derive_seed(self.seed, k))
        r, g = cur.op(ctx)
        if r is None:
            if not emitted:
                return None, EXHAUSTED
            k += 1
            if self._done(k):
                return None, EXHAUSTED
            cur, emitted = reseed(self.gen, derive_seed(self.seed, k)), False
            r, g = cur.op(ctx)
            if r is None:
                return None, EXHAUSTED
        return r, Cycle(self.gen, self.times, self.seed, k, g, emitted or r is not PENDING)

    def update(self, ctx: Context, event: Op) -> Any:
        if self.current is None:
            return self
        g = self.current.update(ctx, event)
        if g is self.current:
            return self
        return Cycle(self.gen, self.times, self.seed, self.k, g, self.emitted)

    def reseed(self, seed: int) -> Any:
        return Cycle(self.gen, self.times, seed)


def cycle(g: GenLike, times: int | None = None) -> Cycle:
    """Run ``g`` to exhaustion, then again from the start, forever or ``times`` times:
    ``cycle([once(a), once(b)])`` is a, b, a, b..."""
    if times is not None and times < 0:
        raise ValueError(f"cycle needs times >= 0 or None, not {times}")
    return Cycle(as_gen(g), times)


# --------------------------------------------------------------------------------------
# Time


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """Ops of ``gen`` until ``limit`` ns after this generator started (its first ``op()`` or
    ``update()``); a request at or after the deadline ends it."""

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
            return None, EXHAUSTED
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


# --------------------------------------------------------------------------------------
# Sequencing


def _check_sequence(gens: Sequence[Any]) -> None:
    for i, g in enumerate(gens[:-1]):
        if isinstance(g, Template):
            raise GeneratorError(
                f"element {i} of a sequence is the op template {g.f!r}, which repeats "
                "forever, so the elements after it would never run; wrap it in once(...) "
                "or limit(n, ...)"
            )


@dataclass(frozen=True, slots=True)
class Concat:
    """``current`` until exhausted, then ``rest[pos]``, ``rest[pos + 1]``... No waiting for
    completions between them (use ``phases`` for that). Events go to the current one."""

    current: Any
    rest: tuple[Any, ...] = ()
    pos: int = 0

    def op(self, ctx: Context) -> Answer:
        cur, pos, rest = self.current, self.pos, self.rest
        while True:
            r, g = cur.op(ctx)
            if r is not None:
                if g is self.current and pos == self.pos:
                    return r, self
                return r, Concat(g, rest, pos)
            if pos >= len(rest):
                return None, EXHAUSTED
            cur = rest[pos]
            pos += 1

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.current.update(ctx, event)
        return self if g is self.current else Concat(g, self.rest, self.pos)

    def reseed(self, seed: int) -> Any:
        gens = (self.current, *self.rest[self.pos :])
        return Concat(
            reseed(gens[0], derive_seed(seed, 0)),
            tuple(reseed(g, derive_seed(seed, i + 1)) for i, g in enumerate(gens[1:])),
        )


def concat(*gs: GenLike) -> Any:
    """Each of ``gs`` in turn, the next one starting as soon as the previous is exhausted.
    A list or tuple lifts to this."""
    gens = [as_gen(g) for g in gs]
    if not gens:
        return EXHAUSTED
    _check_sequence(gens)
    if len(gens) == 1:
        return gens[0]
    return Concat(gens[0], tuple(gens[1:]))


def then(a: GenLike, b: GenLike) -> Any:
    """``a`` then ``b`` (``concat(a, b)``). Unlike Jepsen's ``then``, the order is the reading
    order and nothing synchronizes; use ``phases(a, b)`` to wait for ``a``'s ops."""
    return concat(a, b)


@dataclass(frozen=True, slots=True)
class Phases:
    """Each phase in turn; a phase starts once the previous one is exhausted **and** every
    op it emitted has completed. ``outstanding`` holds the processes of the current phase's
    ops in flight (recorded when emitted, cleared by their completion events)."""

    current: Any
    rest: tuple[Any, ...] = ()
    pos: int = 0
    outstanding: frozenset[Process] = _EMPTY_OUTSTANDING
    draining: bool = False

    def op(self, ctx: Context) -> Answer:
        cur, pos, out, draining = self.current, self.pos, self.outstanding, self.draining
        while True:
            if not draining:
                r, g = cur.op(ctx)
                if r is PENDING:
                    if g is self.current and pos == self.pos:
                        return r, self
                    return r, Phases(g, self.rest, pos, out)
                if r is not None:
                    return r, Phases(g, self.rest, pos, out | {r.process})
                draining = True
            if out:
                if self.draining and pos == self.pos:
                    return PENDING, self
                return PENDING, Phases(EXHAUSTED, self.rest, pos, out, True)
            if pos >= len(self.rest):
                return None, EXHAUSTED
            cur, pos, draining = self.rest[pos], pos + 1, False

    def update(self, ctx: Context, event: Op) -> Any:
        out = self.outstanding
        if event.type != "invoke" and event.process in out:
            out = out - {event.process}
        g = self.current if self.draining else self.current.update(ctx, event)
        if g is self.current and out is self.outstanding:
            return self
        return Phases(g, self.rest, self.pos, out, self.draining)

    def reseed(self, seed: int) -> Any:
        gens = (self.current, *self.rest[self.pos :])
        return Phases(
            reseed(gens[0], derive_seed(seed, 0)),
            tuple(reseed(g, derive_seed(seed, i + 1)) for i, g in enumerate(gens[1:])),
        )


def phases(*gs: GenLike) -> Any:
    """Each of ``gs`` in turn, each waiting until the previous one is exhausted and all its
    operations have completed (ok, fail or info). The usual test shape:
    ``phases(time_limit(60, any_of(clients(w), nemesis_schedule(5))), nemesis(once(stop)),
    clients(final_reads))``."""
    gens = [as_gen(g) for g in gs]
    if not gens:
        return EXHAUSTED
    _check_sequence(gens)
    return Phases(gens[0], tuple(gens[1:]))


@dataclass(frozen=True, slots=True)
class Synchronize:
    """``gen`` once every thread in scope is free (Jepsen's ``synchronize``)."""

    gen: Any
    started: bool = False

    def op(self, ctx: Context) -> Answer:
        if not self.started and len(ctx.free_threads) != len(ctx.all_threads):
            return PENDING, self
        r, g = self.gen.op(ctx)
        if r is None:
            return None, EXHAUSTED
        return r, Synchronize(g, True)

    def update(self, ctx: Context, event: Op) -> Any:
        if not self.started:
            return self
        g = self.gen.update(ctx, event)
        return self if g is self.gen else Synchronize(g, True)

    def reseed(self, seed: int) -> Any:
        return Synchronize(reseed(self.gen, seed), self.started)


def synchronize(g: GenLike) -> Synchronize:
    """Wait until all threads in scope are idle, then run ``g``."""
    return Synchronize(as_gen(g))


# --------------------------------------------------------------------------------------
# Choice and parallelism


@dataclass(frozen=True, slots=True)
class Mix:
    """Each op from one of ``gens`` chosen at random (seeded), weighted by ``cum`` (the
    cumulative weights). Exhausted children are dropped. While the chosen child is PENDING
    the choice sticks. Events go to every child."""

    gens: tuple[Any, ...]
    cum: tuple[float, ...]
    state: int = 0

    def op(self, ctx: Context) -> Answer:
        gens, cum, state = self.gens, self.cum, self.state
        while gens:
            u, nstate = rng_float(state)
            i = bisect.bisect_right(cum, u * cum[-1]) if len(gens) > 1 else 0
            if i >= len(gens):
                i = len(gens) - 1
            r, g = gens[i].op(ctx)
            if r is None:
                gens = gens[:i] + gens[i + 1 :]
                w = _weights(cum)
                cum = _cumulative(w[:i] + w[i + 1 :])
                state = nstate
                continue
            ng = gens if g is gens[i] else (*gens[:i], g, *gens[i + 1 :])
            if r is PENDING:
                if ng is self.gens and state == self.state:
                    return r, self
                return r, Mix(ng, cum, state)
            return r, Mix(ng, cum, nstate)
        return None, EXHAUSTED

    def update(self, ctx: Context, event: Op) -> Any:
        gens = _update_all(self.gens, ctx, event)
        return self if gens is None else Mix(gens, self.cum, self.state)

    def reseed(self, seed: int) -> Any:
        return Mix(
            tuple(reseed(g, derive_seed(seed, i + 1)) for i, g in enumerate(self.gens)),
            self.cum,
            derive_seed(seed, 0),
        )


def _cumulative(weights: Sequence[float]) -> tuple[float, ...]:
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return tuple(out)


def _weights(cum: Sequence[float]) -> list[float]:
    return [c - (cum[i - 1] if i else 0.0) for i, c in enumerate(cum)]


def mix(gs: Sequence[GenLike], weights: Sequence[float] | None = None) -> Any:
    """A random (seeded) mixture: each op comes from one of ``gs``, uniformly or by
    ``weights``; ``mix([{"f": "read"}, {"f": "write", ...}], weights=[9, 1])``."""
    gens = tuple(as_gen(g) for g in gs)
    if not gens:
        return EXHAUSTED
    w = [1.0] * len(gens) if weights is None else [float(x) for x in weights]
    if len(w) != len(gens) or any(x <= 0 for x in w):
        raise ValueError(f"mix needs one positive weight per generator, got {list(w)}")
    return Mix(gens, _cumulative(w))


@dataclass(frozen=True, slots=True)
class AnyOf:
    """All of ``gens`` in parallel: each ``op()`` asks every child and emits the soonest
    request (ties broken at random, seeded). Exhausted children are dropped; PENDING
    children keep their successor; events go to every child. A request in the future is
    held back (PENDING) while some child is PENDING, so that child is polled meanwhile: a
    future request then goes out at most one runner poll (~10 ms) late."""

    gens: tuple[Any, ...]
    state: int = 0

    def op(self, ctx: Context) -> Answer:
        gens = self.gens
        kept: list[Any] = []
        cands: list[tuple[int, int, Request, Any]] = []
        for g in gens:
            r, g2 = g.op(ctx)
            if r is None:
                continue
            if r is PENDING:
                kept.append(g2)
            else:
                cands.append((r.time, len(kept), r, g2))
                kept.append(g)
        if not kept:
            return None, EXHAUSTED
        if not cands or (len(cands) < len(kept) and min(c[0] for c in cands) > ctx.time):
            # Nothing now, or only a future request while another child is PENDING: that
            # child must be asked again soon (a sleep may end before the request is due),
            # so poll rather than let the runner sleep until the request's time.
            nk = tuple(kept)
            same = len(nk) == len(gens) and all(a is b for a, b in zip(nk, gens, strict=True))
            return PENDING, (self if same else AnyOf(nk, self.state))
        j, state = _soonest(cands, self.state)
        _, slot, r, g2 = cands[j]
        kept[slot] = g2
        return r, AnyOf(tuple(kept), state)

    def update(self, ctx: Context, event: Op) -> Any:
        gens = _update_all(self.gens, ctx, event)
        return self if gens is None else AnyOf(gens, self.state)

    def reseed(self, seed: int) -> Any:
        return AnyOf(
            tuple(reseed(g, derive_seed(seed, i + 1)) for i, g in enumerate(self.gens)),
            derive_seed(seed, 0),
        )


def any_of(*gs: GenLike) -> Any:
    """Run ``gs`` in parallel; each op comes from whichever has one soonest. Usually with
    disjoint threads: ``any_of(clients(workload), nemesis(faults))``."""
    gens = tuple(as_gen(g) for g in gs)
    if not gens:
        return EXHAUSTED
    return gens[0] if len(gens) == 1 else AnyOf(gens)


def both(a: GenLike, b: GenLike) -> Any:
    """``any_of(a, b)``."""
    return any_of(a, b)


@dataclass(frozen=True, slots=True)
class FlipFlop:
    """An op from ``gens[i]``, then from the other one, alternating; exhausted as soon as
    the one whose turn it is is exhausted. Events go to both."""

    gens: tuple[Any, Any]
    i: int = 0

    def op(self, ctx: Context) -> Answer:
        i = self.i
        r, g = self.gens[i].op(ctx)
        if r is None:
            return None, EXHAUSTED
        gens = (g, self.gens[1]) if i == 0 else (self.gens[0], g)
        if r is PENDING:
            return r, (self if g is self.gens[i] else FlipFlop(gens, i))
        return r, FlipFlop(gens, 1 - i)

    def update(self, ctx: Context, event: Op) -> Any:
        a, b = (g.update(ctx, event) for g in self.gens)
        if a is self.gens[0] and b is self.gens[1]:
            return self
        return FlipFlop((a, b), self.i)

    def reseed(self, seed: int) -> Any:
        a, b = self.gens
        return FlipFlop((reseed(a, derive_seed(seed, 1)), reseed(b, derive_seed(seed, 2))), self.i)


def flip_flop(a: GenLike, b: GenLike) -> FlipFlop:
    """Alternate: an op from ``a``, one from ``b``, one from ``a``... until either runs out."""
    return FlipFlop((as_gen(a), as_gen(b)))


# --------------------------------------------------------------------------------------
# Threads and processes


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
            j, state = _soonest(cands, state)
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


# --------------------------------------------------------------------------------------
# Filtering

MAX_SKIPS: Final = 10_000


@dataclass(frozen=True, slots=True)
class FilterF:
    """The ops of ``gen`` whose ``f`` satisfies ``pred``; the others are skipped (``gen``
    advances past them). Raises after ``MAX_SKIPS`` consecutive skips, the sign of a
    filter that can never match."""

    pred: Callable[[str], bool]
    gen: Any

    def op(self, ctx: Context) -> Answer:
        g = self.gen
        for _ in range(MAX_SKIPS):
            r, g2 = g.op(ctx)
            if r is None:
                return None, EXHAUSTED
            if r is PENDING or self.pred(r.f):
                return r, (self if g2 is self.gen else FilterF(self.pred, g2))
            g = g2
        raise GeneratorError(
            f"filter_f skipped {MAX_SKIPS} ops in a row without a match: its generator "
            "probably never emits a matching f; check the names given to filter_f"
        )

    def update(self, ctx: Context, event: Op) -> Any:
        g = self.gen.update(ctx, event)
        return self if g is self.gen else FilterF(self.pred, g)

    def reseed(self, seed: int) -> Any:
        return FilterF(self.pred, reseed(self.gen, seed))


def filter_f(f: str | Collection[str] | Callable[[str], bool], g: GenLike) -> FilterF:
    """Only the ops of ``g`` whose ``f`` is ``f`` (a name), in ``f`` (names), or satisfies
    ``f`` (a predicate)."""
    if isinstance(f, str):
        pred: Callable[[str], bool] = frozenset((f,)).__contains__
    elif callable(f):
        pred = f
    else:
        pred = frozenset(f).__contains__
    return FilterF(pred, as_gen(g))
