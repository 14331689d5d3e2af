"""Redlock, the algorithm as published by Redis ("Distributed Locks with Redis"), over N
independent servers; target-independent (a ``Server`` is one server's three scripts).

Our own small implementation rather than ``pottery``'s: the published algorithm is a page
long, and here each step is visible and its failures classified for the history.

- **acquire**: note the time; on every server in turn, ``SET name owner NX PX ttl`` with a
  timeout short compared with the TTL; the lock is held iff a majority (N/2+1) said OK and
  the validity left, ``ttl - elapsed - drift`` with ``drift = 0.01 * ttl + 2 ms``, is still
  positive. Otherwise unlock every server (even those that seemed to refuse: an answer may
  have been lost) and report not acquired;
- **extend** (the watchdog): the same with a script that resets the TTL only where the key
  still holds ``owner``: extended iff a majority did, within the validity;
- **release**: compare-and-delete on every server.

A server that certainly did nothing (refused, or unreachable before sending) counts as a
"no"; one whose answer was lost counts as "maybe". When the maybes leave the outcome open,
it is unknown (``OpUnknown``): the history gets ``info``, never a guess.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

DRIFT_FACTOR = 0.01
DRIFT_FIXED = 0.002
YES, NO, MAYBE = "yes", "no", "maybe"


class Server(Protocol):
    """One independent server's lock scripts; each raises ``OpFailed``/``OpUnknown``."""

    def set_nx(self, name: str, owner: str, ttl_ms: int) -> bool: ...

    def extend(self, name: str, owner: str, ttl_ms: int) -> bool: ...

    def delete(self, name: str, owner: str) -> bool: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Tally:
    """How one round over the servers went: per server yes, no (definite) or maybe
    (unknown), and the errors met."""

    outcomes: tuple[str, ...]
    errors: tuple[str, ...]

    @property
    def yes(self) -> int:
        return self.outcomes.count(YES)

    @property
    def maybe(self) -> int:
        return self.outcomes.count(MAYBE)

    def describe(self) -> str:
        text = f"{self.yes} yes, {self.outcomes.count(NO)} no, {self.maybe} unknown"
        return text + (f" ({self.errors[0]})" if self.errors else "")


class Redlock:
    """The algorithm over ``servers`` with a lock TTL of ``ttl`` seconds."""

    def __init__(
        self, servers: Sequence[Server], ttl: float, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.servers = list(servers)
        self.ttl = ttl
        self.quorum = len(self.servers) // 2 + 1
        self.drift = DRIFT_FACTOR * ttl + DRIFT_FIXED
        self._monotonic = monotonic

    @property
    def validity(self) -> float:
        """Seconds after an attempt began that a lock it won is certainly held:
        ``ttl - drift`` (the time the attempt took is inside that window)."""
        return self.ttl - self.drift

    def _round(self, step: Callable[[Server], bool]) -> Tally:
        outcomes: list[str] = []
        errors: list[str] = []
        for server in self.servers:
            try:
                outcomes.append(YES if step(server) else NO)
            except OpFailed as e:
                outcomes.append(NO)
                errors.append(str(e))
            except OpUnknown as e:
                outcomes.append(MAYBE)
                errors.append(str(e))
        return Tally(tuple(outcomes), tuple(errors))

    def acquire(self, name: str, owner: str) -> bool:
        """One attempt; True when held. False when certainly not held now (unlocked again
        wherever it may have been set; a lock won too late to use counts as not won, as in
        the published algorithm); ``OpUnknown`` when lost answers leave a majority possibly
        still holding it; ``OpFailed`` when no server could be reached at all."""
        ttl_ms = round(self.ttl * 1000)
        start = self._monotonic()
        tally = self._round(lambda s: s.set_nx(name, owner, ttl_ms))
        elapsed = self._monotonic() - start
        if tally.yes >= self.quorum and elapsed < self.validity:
            return True
        undo = self._round(lambda s: s.delete(name, owner))
        maybe_held = sum(
            1 for a, u in zip(tally.outcomes, undo.outcomes, strict=True) if a != NO and u == MAYBE
        )
        if maybe_held >= self.quorum:
            raise OpUnknown(
                f"Redlock acquire of {name}: {tally.describe()} of "
                f"{len(self.servers)}; unlocking left {maybe_held} unknown"
            )
        if len(tally.errors) == len(self.servers) and tally.maybe == 0:
            raise OpFailed(f"Redlock acquire of {name}: no server reachable ({tally.describe()})")
        return False

    def extend(self, name: str, owner: str) -> None:
        """Reset the TTL on every server still holding ``owner``: done when a majority did
        within the validity; ``LeaseNotFound`` when a majority certainly no longer holds
        it; ``OpUnknown`` otherwise."""
        ttl_ms = round(self.ttl * 1000)
        start = self._monotonic()
        tally = self._round(lambda s: s.extend(name, owner, ttl_ms))
        elapsed = self._monotonic() - start
        if tally.yes >= self.quorum and elapsed < self.validity:
            return
        if tally.yes + tally.maybe < self.quorum:
            raise LeaseNotFound(
                f"Redlock {name} lost: {tally.describe()} of {len(self.servers)} still held it"
            )
        raise OpUnknown(
            f"Redlock extend of {name}: {tally.describe()}, "
            f"{elapsed:.3f} s of {self.validity:.3f} s validity"
        )

    def release(self, name: str, owner: str) -> None:
        """Compare-and-delete everywhere; ``LeaseNotFound`` when a majority certainly no
        longer held it (the release did nothing that mattered)."""
        tally = self._round(lambda s: s.delete(name, owner))
        if tally.yes >= self.quorum:
            return
        if tally.yes + tally.maybe < self.quorum:
            raise LeaseNotFound(
                f"Redlock release of {name}: only {tally.describe()} of "
                f"{len(self.servers)} still held it"
            )
        raise OpUnknown(f"Redlock release of {name}: {tally.describe()}")

    def close(self) -> None:
        for server in self.servers:
            server.close()
