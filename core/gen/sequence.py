"""Sequencing: a generator for a number of ops (``limit``, ``once``, ``repeat``, ``cycle``),
one after another (``then``), in phases that wait for completions (``phases``), and
after every outstanding op completed (``synchronize``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from core.gen.context import PENDING, Answer, Context, Process, reseed
from core.gen.lift import EXHAUSTED, FnGen, GenLike, Template, as_gen, check_sequence, concat
from core.gen.rng import derive_seed, rng_next
from core.ops import Op

_EMPTY_OUTSTANDING: Final[frozenset[Process]] = frozenset()


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
    check_sequence(gens)
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
