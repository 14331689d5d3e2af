"""The watch workload's operations: watchers follow the keys, writers change them.

The first ``watchers`` client threads only ``collect`` (each op gathers what the process's
watch received, waiting up to ``WAIT_S`` for it); the others ``write`` a random key with a
value unique in the run (a counter), so every change a watcher reports names its write.
During the run's recovery time only the watchers go on (``WatchGen`` with ``writes=False``,
the workload's ``recovery`` generator): the quiet end in which every watcher should settle
on each key's last write. With ``compact_every`` > 0 a free writer asks the service to compact its
history that often. The state lives in the immutable generator value; randomness is seeded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from core.gen import PENDING, Context, Generator, Request, to_ns
from core.gen.rng import derive_seed, rng_below
from core.ops import Op

WAIT_S: Final = 0.5
"""Seconds a ``collect`` op waits for a first notification (well under any op timeout)."""


@dataclass(frozen=True)
class WatchGen:
    """See the module docstring; ``start`` is set by the first op acted upon."""

    keys: int
    watchers: int
    writes: bool = True
    compact_every: float = 0.0
    seed: int = 0
    counter: int = 0
    start: int | None = None
    compacts: int = 0

    def reseed(self, seed: int) -> WatchGen:
        return replace(self, seed=seed)

    def op(self, ctx: Context) -> tuple[Request | Any | None, Generator]:
        start = ctx.time if self.start is None else self.start
        me = replace(self, start=start)
        free = ctx.free_targets
        watchers = [t for t in free if isinstance(t, int) and t < self.watchers]
        if watchers:
            p = ctx.thread_process[watchers[0]]
            return Request(p, "collect", WAIT_S, None, ctx.time), me
        writers = [t for t in free if isinstance(t, int) and t >= self.watchers]
        if not writers or not self.writes:
            return PENDING, me
        state = derive_seed(self.seed, self.counter)
        i, state = rng_below(state, len(writers))
        p = ctx.thread_process[writers[i]]
        due = start + to_ns(self.compact_every * (self.compacts + 1))
        if self.compact_every > 0 and ctx.time >= due:
            return Request(p, "compact", None, None, ctx.time), replace(
                me, compacts=self.compacts + 1
            )
        key, _ = rng_below(state, self.keys)
        n = self.counter + 1
        return Request(p, "write", n, key, ctx.time), replace(me, counter=n)

    def update(self, ctx: Context, event: Op) -> Generator:
        return self
