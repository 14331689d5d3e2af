"""Lifting plain values to generators: None, an op template (a dict), a function
``rng -> dict`` and a list (``concat``); ``seeded`` seeds a whole tree."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from core.gen.context import (
    PENDING,
    Answer,
    Context,
    Generator,
    GeneratorError,
    Pending,
    Request,
    Thread,
    reseed,
)
from core.gen.rng import MASK, SplitMixRandom, derive_seed, rng_below, rng_next
from core.ops import Op


@dataclass(frozen=True, slots=True)
class Exhausted:
    """The empty generator (what ``None`` lifts to)."""

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Generator]:
        return None, self

    def update(self, ctx: Context, event: Op) -> Generator:
        return self

    def reseed(self, seed: int) -> Generator:
        return self


EXHAUSTED: Final = Exhausted()

_TEMPLATE_KEYS: Final = frozenset({"f", "value", "key"})


def check_template(d: Mapping[str, Any]) -> None:
    if "f" not in d:
        raise GeneratorError(f"op template {dict(d)!r} has no 'f': write {{'f': 'read', ...}}")
    extra = set(d) - _TEMPLATE_KEYS
    if extra:
        raise GeneratorError(
            f"op template {dict(d)!r} has unknown keys {sorted(extra)}: a template has only "
            "'f', 'value' and 'key'; choose processes with on_processes()/clients()/nemesis() "
            "and times with at()/delay()/stagger()"
        )


def _pick(ctx: Context, state: int) -> tuple[Thread | None, int]:
    """A seeded choice among ``ctx.free_targets`` (None when none is free)."""
    targets = ctx.free_targets
    n = len(targets)
    if n == 0:
        return None, state
    if n == 1:
        return targets[0], state
    i, state = rng_below(state, n)
    return targets[i], state


@dataclass(frozen=True, slots=True)
class Template:
    """An op template (a lifted dict): the same operation, forever, each time to a free
    client thread chosen at random (seeded). In a scope without client threads (inside
    ``nemesis()``) it goes to the nemesis thread. PENDING while no target is free."""

    f: str
    value: Any = None
    key: Any = None
    state: int = 0

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Generator]:
        targets = ctx.free_targets
        n = len(targets)
        if n == 0:
            return PENDING, self
        x, state = rng_next(self.state)
        thread = targets[x % n]
        req = Request(ctx.thread_process[thread], self.f, self.value, self.key, ctx.time)
        return req, Template(self.f, self.value, self.key, state)

    def update(self, ctx: Context, event: Op) -> Generator:
        return self

    def reseed(self, seed: int) -> Generator:
        return Template(self.f, self.value, self.key, seed & MASK)


OpFunction: TypeAlias = Callable[[random.Random], "Mapping[str, Any] | None"]


@dataclass(frozen=True, slots=True)
class FnGen:
    """A lifted function ``fn(rng) -> dict | None``: called for every op with a
    ``random.Random`` (a ``SplitMixRandom``) seeded from this generator's state; its dict is
    emitted to a free target as ``Template`` does, and ``None`` ends the generator. ``fn``
    must be deterministic given ``rng`` (no global random, no clock) or replay breaks."""

    fn: OpFunction
    state: int = 0

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Generator]:
        if not ctx.free_targets:
            return PENDING, self
        x, state = rng_next(self.state)
        d = self.fn(SplitMixRandom(x))
        if d is None:
            return None, EXHAUSTED
        if "f" not in d or len(d) > 3:
            check_template(d)
        thread, state = _pick(ctx, state)
        assert thread is not None
        req = Request(ctx.thread_process[thread], d["f"], d.get("value"), d.get("key"), ctx.time)
        return req, FnGen(self.fn, state)

    def update(self, ctx: Context, event: Op) -> Generator:
        return self

    def reseed(self, seed: int) -> Generator:
        return FnGen(self.fn, seed & MASK)


GenLike: TypeAlias = "Generator | Mapping[str, Any] | OpFunction | Sequence[GenLike] | None"


def as_gen(x: GenLike) -> Generator:
    """Lift a plain value to a generator.

    - a ``Generator``: itself;
    - ``None``: exhausted;
    - a dict ``{"f": ..., "value": ..., "key": ...}``: that op forever (``Template``);
      wrap it in ``once()`` or ``limit()`` for fewer;
    - a function ``rng -> dict | None``: a fresh op per call (``FnGen``);
    - a list or tuple: its elements one after another (``concat``).
    """
    if x is None:
        return EXHAUSTED
    if isinstance(x, Mapping):
        check_template(x)
        return Template(x["f"], x.get("value"), x.get("key"))
    if isinstance(x, (list, tuple)):
        return concat(*x)
    if hasattr(x, "op") and hasattr(x, "update"):
        return x
    if callable(x):
        return FnGen(x)
    raise GeneratorError(
        f"cannot make a generator from {x!r} ({type(x).__name__}): use a dict op template, "
        "a function rng -> dict, a list of generators, None, or a Generator"
    )


def seeded(seed: int, x: GenLike) -> Generator:
    """``x`` with all its randomness derived from ``seed``: the same seed and the same
    contexts replay the same requests. Apply it once at the top of a test's generator."""
    return reseed(as_gen(x), seed & MASK)


def check_sequence(gens: Sequence[Any]) -> None:
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
    check_sequence(gens)
    if len(gens) == 1:
        return gens[0]
    return Concat(gens[0], tuple(gens[1:]))
