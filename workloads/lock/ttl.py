"""The lock workload's client for locks that are their own lease: a key with a TTL that holds
its owner's random value (Redis's SET NX PX lock, Redlock).

Such a lock has no lease apart from itself, so the lease begins with the claim: the
``lease-granted`` event's ``sent`` is when the winning attempt left, and its ``ttl`` is how
long after that the lock is certainly still held (the backend's ``validity``: the TTL on one
server, less the allowance for clock drift for Redlock). Then a watchdog, like Redisson's,
extends the TTL every ``keepalive`` s from the keeper thread, on a connection of its own; a
SIGSTOP freezes it like any keepalive. It hands out no fencing token: ``acquire`` answers
``{"token": None, "lease": owner, "name": lock}`` and the critical section writes unfenced
(the resource accepts and flags such writes; ``checkers.mutex`` judges them).

- ``acquire``: a fresh random owner value; attempts until granted or ``wait`` s have passed,
  with a short random pause between attempts (as Redlock prescribes, so that contenders do
  not retry in lockstep) -> fail ``not granted``; an attempt whose outcome is unknown is
  undone (compare-and-delete, best effort) and the acquire completes as info;
- ``write``: the critical section (``workloads.common.critical``), token None;
- ``release``: compare-and-delete; ``LeaseNotFound`` (fail) when the key was no longer ours.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any, Protocol

from checkers.refusals import NOT_GRANTED
from workloads.common.holder import HolderClient
from workloads.common.lease import KeptLease, Session
from workloads.errors import OpFailed, OpUnknown
from workloads.lock.ops import ACQUIRE, RELEASE

RETRY_PAUSE = (0.005, 0.05)
"""Seconds between two attempts: uniformly random in this range."""


class TtlLockBackend(Protocol):
    """A driver for a lock that is a key with a TTL holding its owner's value."""

    @property
    def validity(self) -> float:
        """Seconds after a successful attempt or extension was sent during which the lock
        is certainly held."""
        ...

    def try_acquire(self, name: str, owner: str) -> bool:
        """One attempt: True when ``owner`` now holds ``name``, False when another does
        (definite). ``OpFailed``/``OpUnknown`` otherwise."""
        ...

    def extend(self, name: str, owner: str) -> None:
        """Reset the TTL if ``owner`` still holds ``name``; ``LeaseNotFound`` if not."""
        ...

    def release(self, name: str, owner: str) -> None:
        """Delete ``name`` if ``owner`` holds it; ``LeaseNotFound`` if it did not."""
        ...

    def close(self) -> None: ...


class TtlLockClient(HolderClient[TtlLockBackend]):
    """One worker's client of a TTL lock: ``acquire`` / ``write`` / ``release``."""

    take_f = ACQUIRE
    give_f = RELEASE
    number_key = "token"

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        owner = secrets.token_hex(16)
        clock = self.ctx.clock
        deadline = time.monotonic() + self.wait
        while True:
            sent = clock.now()
            try:
                if self.backend.try_acquire(name, owner):
                    break
            except OpUnknown:
                self._let_go(name, owner)
                raise
            pause = random.uniform(*RETRY_PAUSE)
            if time.monotonic() + pause > deadline:
                raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {self.wait:g} s")
            time.sleep(pause)
        keeper = self._connect()
        session = KeptLease(
            owner,
            self.backend.validity,
            self.keepalive,
            lambda lease: keeper.extend(name, lease),
            self.events,
            name,
            sent,
            on_end=keeper.close,
        )
        return session, None

    def _let_go(self, name: str, owner: str) -> None:
        """Undo an attempt that may have succeeded; if this fails too, the key expires."""
        try:
            self.backend.release(name, owner)
        except (OpFailed, OpUnknown):
            pass

    def _unclaim(self, name: str, lease: Any) -> None:
        self.backend.release(name, str(lease))
