"""The lock workload (``WORKLOAD``) and its client, for any target that offers leases and
locks with tokens.

Operations (``Invocation.f``):

- ``acquire``: grant a lease, keep it alive from a background thread, acquire the lock
  (blocking up to ``wait`` s) -> ok ``{"token": n, "lease": id, "name": lock}``; fail
  ``"not granted"``. The value may name the lock: ``{"name": "lock-0"}``;
- ``write`` (value: what to write): the critical section
  (``workloads.critical.fenced_write``) with the token;
- ``release``: release the lock and revoke the lease -> ok; fail when the service says the
  lock or the lease was already gone (the release certainly did nothing).

A target supplies a ``LockBackend`` (its driver, raising ``workloads.errors`` classes and
``workloads.lease.LeaseNotFound``) and a picklable factory that builds a ``LockClient``.

Its runs are checked for mutual exclusion with the cause of every overlap and stale write
(``checkers.mutex``), fencing-number monotonicity and enforcement (``checkers.fencing``),
lease-aware owner-aware mutex linearizability when the run recorded that the target's
locks claim it (``checkers.mutex_lin``), and statistics (``checkers.stats``).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Protocol

from checkers import fencing, mutex, mutex_lin, stats
from workloads.cycles import lock_cycle
from workloads.holder import LeaseHolderClient
from workloads.lease import Lease, LeaseBackend
from workloads.workload import When, Workload


class LockBackend(LeaseBackend, Protocol):
    """A driver offering locks attached to leases, granting fencing tokens."""

    def acquire(self, name: str, lease: Lease, wait: float) -> int: ...

    def release(self, name: str, lease: Lease) -> None: ...


class LockClient(LeaseHolderClient[LockBackend]):
    """One worker's lock client: ``acquire`` / ``write`` / ``release``."""

    take_f = "acquire"
    give_f = "release"
    number_key = "token"

    def _claim(self, name: str, lease: Lease, value: Any) -> int:
        return self.backend.acquire(name, lease, self.wait)

    def _unclaim(self, name: str, lease: Lease) -> None:
        self.backend.release(name, lease)


WORKLOAD = Workload(
    name="lock",
    help="acquire, write with the token, release, on --locks locks",
    generator=lambda opts, seed: lock_cycle(opts.locks),
    needs_resource=True,
    holds=True,
    default_fault="client-pause",
    checkers=(
        mutex.check_record,
        fencing.check_record,
        When(attrgetter("linearizable_locks"), mutex_lin.check_record),
        stats.check_record,
    ),
)
