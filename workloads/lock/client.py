"""The lock workload's client, for any target that offers leases and locks with tokens.

Operations (``Invocation.f``):

- ``acquire``: grant a lease, keep it alive from a background thread, acquire the lock
  (blocking up to ``wait`` s) -> ok ``{"token": n, "lease": id, "name": lock}``; fail
  ``"not granted"``. The value may name the lock: ``{"name": "lock-0"}``;
- ``write`` (value: what to write): the critical section
  (``workloads.common.critical.fenced_write``) with the token; the resource gets the value signed
  by its writer and token (``{"name": "lock-0", "writer": 3, "token": 12}``);
- ``release``: release the lock and revoke the lease -> ok; fail when the service says the
  lock or the lease was already gone (the release certainly did nothing).

A target supplies a ``LockBackend`` (its driver, raising ``workloads.errors`` classes and
``workloads.common.lease.LeaseNotFound``) and a picklable factory that builds a ``LockClient``.
"""

from __future__ import annotations

from typing import Any, Protocol

from workloads.common.holder import LeaseHolderClient
from workloads.common.lease import Lease, LeaseBackend
from workloads.lock.ops import ACQUIRE, RELEASE


class LockBackend(LeaseBackend, Protocol):
    """A driver offering locks attached to leases, granting fencing tokens."""

    def acquire(self, name: str, lease: Lease, wait: float) -> int: ...

    def release(self, name: str, lease: Lease) -> None: ...


class LockClient(LeaseHolderClient[LockBackend]):
    """One worker's lock client: ``acquire`` / ``write`` / ``release``."""

    take_f = ACQUIRE
    give_f = RELEASE
    number_key = "token"

    def _claim(self, name: str, lease: Lease, value: Any) -> int:
        return self.backend.acquire(name, lease, self.wait)

    def _unclaim(self, name: str, lease: Lease) -> None:
        self.backend.release(name, lease)
