"""Randomness: splitmix64 on a plain int, so the state is part of immutable values."""

from __future__ import annotations

import random
import zlib
from typing import Any, Final

MASK: Final = (1 << 64) - 1
"""The 64 bits of a generator state (and of a seed)."""
_GAMMA: Final = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def rng_next(state: int) -> tuple[int, int]:
    """One splitmix64 step: ``(random 64-bit value, next state)``."""
    state = (state + _GAMMA) & MASK
    return _mix64(state), state


def rng_float(state: int) -> tuple[float, int]:
    """A uniform float in [0, 1) and the next state."""
    x, state = rng_next(state)
    return (x >> 11) * (1.0 / (1 << 53)), state


def rng_below(state: int, n: int) -> tuple[int, int]:
    """A uniform int in [0, n) and the next state (negligible modulo bias for small n)."""
    x, state = rng_next(state)
    return x % n, state


class SplitMixRandom(random.Random):
    """The ``random.Random`` API on a splitmix64 state: cheap to create (one per op of a
    function generator, where seeding a Mersenne Twister would cost more than the op)."""

    def __init__(self, seed: int = 0) -> None:
        self._state = seed & MASK
        self.gauss_next = None

    def seed(self, a: Any = None, version: int = 2) -> None:
        self._state = (a if isinstance(a, int) else zlib.crc32(repr(a).encode())) & MASK
        self.gauss_next = None

    def random(self) -> float:
        x, self._state = rng_next(self._state)
        return (x >> 11) * (1.0 / (1 << 53))

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out, bits = 0, 0
        while bits < k:
            x, self._state = rng_next(self._state)
            out |= x << bits
            bits += 64
        return out & ((1 << k) - 1)

    def getstate(self) -> Any:
        return self._state

    def setstate(self, state: Any) -> None:
        self._state = state


def derive_seed(seed: int, salt: int) -> int:
    """An independent seed for the ``salt``-th child of a generator seeded with ``seed``."""
    return _mix64((seed ^ _mix64((salt + 1) * _GAMMA & MASK)) & MASK)
