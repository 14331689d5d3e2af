"""The lock workload's operations: their names, the loop a client goes through them in, and
the holder they make.

A lock client loops ``acquire`` -> ``write`` (the critical section) -> ``release``
(``workloads.cycles.StepCycle``: a denied acquire is retried, not followed by a write). The
holder (``LOCK_HOLDER``) is what the runner follows, what ``--nemesis-target holder`` aims
at and what test.json's ``holder`` records for the checkers of holdings and the report. The
herd workload's waiters take the same steps on one lock, and share them from here.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from workloads.cycles import NamedResource, StepCycle, Steps
from workloads.holders import Holder

ACQUIRE: Final = "acquire"
WRITE: Final = "write"
RELEASE: Final = "release"

LOCK_STEPS: Steps = MappingProxyType(
    {
        ACQUIRE: (WRITE, ACQUIRE),
        WRITE: (RELEASE, RELEASE),
        RELEASE: (ACQUIRE, ACQUIRE),
    }
)
"""step -> (the next step when it was ok, the next step otherwise)."""

LOCK_HOLDER: Final = Holder(
    "lock holder", frozenset({ACQUIRE}), frozenset({RELEASE}), frozenset({WRITE}), "token"
)
LOCK_OPTIONS: Final = (
    "lease_ttl",
    "keepalive",
    "work_time",
    "acquire_wait",
    "fencing",
    "holder_check",
)
"""The run options that shape a lock holder's work (``Workload.options``)."""


def lock_cycle(locks: int = 1) -> StepCycle:
    """Each client's loop on lock ``lock-<process mod locks>``."""
    return StepCycle(LOCK_STEPS, ACQUIRE, NamedResource("lock", max(1, locks)))
