"""The CAS-register workload's operations: read, write and compare-and-set on independent keys.

Written values are unique per key (a counter), so a history stays cheap to check and a
stale read names exactly which write it saw. CAS often succeeds because its expected value
is the last value this generator saw for the key (from completed reads, writes and
successful CAS). The state lives in the immutable generator value; randomness is seeded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.gen import PENDING, Context, Generator, Request
from core.gen.rng import derive_seed, rng_below, rng_float
from core.ops import Op


@dataclass(frozen=True)
class CasRegisterGen:
    """Emits read / write / cas on ``keys`` keys with the given mix of weights."""

    keys: int = 3
    seed: int = 0
    read: float = 0.4
    write: float = 0.3
    counter: int = 0
    last: Mapping[int, Any] = field(default_factory=lambda: MappingProxyType({}))

    def reseed(self, seed: int) -> CasRegisterGen:
        return CasRegisterGen(self.keys, seed, self.read, self.write, self.counter, self.last)

    def op(self, ctx: Context) -> tuple[Request | Any | None, Generator]:
        targets = ctx.free_targets
        if not targets:
            return PENDING, self
        state = derive_seed(self.seed, self.counter)
        i, state = rng_below(state, len(targets))
        key, state = rng_below(state, self.keys)
        x, state = rng_float(state)
        p = ctx.thread_process[targets[i]]
        n = self.counter + 1
        if x < self.read:
            req = Request(p, "read", None, key, ctx.time)
        elif x < self.read + self.write:
            req = Request(p, "write", n, key, ctx.time)
        else:
            req = Request(p, "cas", [self.last.get(key), n], key, ctx.time)
        nxt = CasRegisterGen(self.keys, self.seed, self.read, self.write, n, self.last)
        return req, nxt

    def update(self, ctx: Context, event: Op) -> Generator:
        if event.type != "ok" or event.key is None:
            return self
        if event.f in ("read", "write"):
            seen = event.value
        elif event.f == "cas" and isinstance(event.value, (list, tuple)):
            seen = event.value[1]
        else:
            return self
        last = dict(self.last)
        last[event.key] = seen
        return CasRegisterGen(
            self.keys, self.seed, self.read, self.write, self.counter, MappingProxyType(last)
        )
