"""Choice and parallelism: ``mix`` (a weighted random choice per op), ``any_of`` / ``both``
(all children at once, the soonest request first) and ``flip_flop`` (alternating)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.gen.context import PENDING, Answer, Context, Request, reseed
from core.gen.lift import EXHAUSTED, GenLike, as_gen
from core.gen.rng import derive_seed, rng_below, rng_float
from core.ops import Op


def soonest(cands: list[tuple[int, int, Request, Any]], state: int) -> tuple[int, int]:
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


def update_all(gens: tuple[Any, ...], ctx: Context, event: Op) -> tuple[Any, ...] | None:
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
        gens = update_all(self.gens, ctx, event)
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
        j, state = soonest(cands, self.state)
        _, slot, r, g2 = cands[j]
        kept[slot] = g2
        return r, AnyOf(tuple(kept), state)

    def update(self, ctx: Context, event: Op) -> Any:
        gens = update_all(self.gens, ctx, event)
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
