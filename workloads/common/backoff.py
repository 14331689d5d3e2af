"""Clients back off while their service is unreachable, as real client libraries do.

Without it a killed server turns every client into a tight loop of "connection refused"
(tens of thousands of failed operations in seconds, a history and report that say nothing
more, and CPU taken from the restarting server). With it, after an operation fails because
the service could not be reached (``workloads.errors.Unreachable``: nothing was sent), the
client sleeps before reporting the failure, so its next try comes later: the delay is drawn
uniformly from 0 to ``min(cap, base * 2**n)`` after the n-th such failure in a row
("full jitter", as in the AWS Architecture Blog's *Exponential Backoff And Jitter*, and
gRPC's and redis-py's reconnection backoffs: bounded, exponential, jittered so that clients
do not retry in step). Any answer from the service (success or refusal) resets it.

The sleep is part of the failed operation (its completion comes later), as with a library
that retries inside a call: the windows of operations that reached the service stay
exactly as measured. The delays come from a ``random.Random`` seeded by the worker's
process id: every run draws the same pauses for a process, whatever its ``--seed``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from core.client import Completion
from workloads.errors import OpFailed, OpUnknown, Unreachable, completion_for

BASE_S: Final = 0.05
"""The first delay's upper bound."""
CAP_S: Final = 1.0
"""No delay is longer: well under any operation timeout, so a backing-off client is never
taken for a hung one."""


@dataclass
class Backoff:
    """Bounded exponential backoff with full jitter for one client (not thread-safe)."""

    seed: int = 0
    base: float = BASE_S
    cap: float = CAP_S
    sleep: Callable[[float], None] = time.sleep
    failures: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def next_delay(self) -> float:
        """The delay after one more unreachable failure in a row (counts it)."""
        bound = min(self.cap, self.base * 2 ** min(self.failures, 30))
        self.failures += 1
        return self._rng.uniform(0, bound)

    def reset(self) -> None:
        """The service answered: the next failure starts again from ``base``."""
        self.failures = 0

    def after(self, error: OpFailed | OpUnknown | None) -> None:
        """Call once an operation has ended: ``error`` is what it failed with, None when it
        succeeded. Sleeps after an ``Unreachable`` failure; an answer resets the backoff;
        an unknown outcome changes nothing."""
        if isinstance(error, Unreachable):
            self.sleep(self.next_delay())
        elif not isinstance(error, OpUnknown):
            self.reset()

    def run(self, op: Callable[[], Completion], node: str | None = None) -> Completion:
        """Do one client operation: its completion, or the one its ``OpFailed`` /
        ``OpUnknown`` maps to (``completion_for``), backing off as ``after`` says."""
        try:
            c = op()
        except (OpFailed, OpUnknown) as e:
            self.after(e)
            return completion_for(e, node)
        self.after(None)
        return c
