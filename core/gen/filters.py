"""Filtering: ``filter_f`` keeps the ops of a generator whose ``f`` matches."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Final

from core.gen.context import PENDING, Answer, Context, GeneratorError, reseed
from core.gen.lift import EXHAUSTED, GenLike, as_gen
from core.ops import Op

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
