"""``SimClient``: the blocking driver of the sim service, with its error classification.

One TCP connection, one request at a time (give each thread its own client). Every
failure becomes one of ``workloads.errors``' two classes:

==================================================  ==================  ==========
what happened                                       raised              completes
==================================================  ==================  ==========
connection refused / could not send                 ``NotSent``         fail
the service refused ("not granted", "cas mismatch") ``Rejected``        fail
the service says the lease is gone                  ``LeaseNotFound``   fail
timeout or connection lost after sending            ``NoAnswer``        info
==================================================  ==================  ==========

Blocking operations (``acquire``, ``campaign``) wait up to ``wait`` seconds on the server;
their answer timeout is ``wait`` plus the client's request timeout.
"""

from __future__ import annotations

from typing import Any

from checkers.refusals import LEASE_NOT_FOUND
from workloads.common.lease import LeaseNotFound
from workloads.common.wire import NoAnswer, NotSent, Rejected, WireClient

__all__ = ["LeaseNotFound", "NoAnswer", "NotSent", "Rejected", "SimClient"]


class SimClient:
    """Implements ``workloads.lock.LockBackend``, ``workloads.election.ElectionBackend`` and
    ``workloads.register.RegisterBackend`` for the sim service at ``address``."""

    def __init__(self, address: str, timeout: float = 5.0) -> None:
        self.address = address
        self.timeout = timeout
        self._wire = WireClient(address, timeout=timeout)

    def call(self, op: str, timeout: float | None = None, **args: Any) -> Any:
        """One raw request (see ``clusters.sim.server`` for the operations)."""
        try:
            return self._wire.call(op, timeout=timeout, **args)
        except Rejected as e:
            if str(e) == LEASE_NOT_FOUND:
                raise LeaseNotFound(str(e)) from None
            raise

    def close(self) -> None:
        self._wire.close()

    # leases
    def grant_lease(self, ttl: float) -> int:
        return int(self.call("lease_grant", ttl=ttl)["lease"])

    def keepalive(self, lease: int) -> float:
        return float(self.call("lease_keepalive", lease=lease)["ttl"])

    def lease_ttl(self, lease: int) -> float:
        return float(self.call("lease_ttl", lease=lease)["ttl"])

    def revoke(self, lease: int) -> None:
        self.call("lease_revoke", lease=lease)

    # locks
    def acquire(self, name: str, lease: int, wait: float) -> int:
        timeout = wait + self.timeout
        r = self.call("lock_acquire", timeout=timeout, name=name, lease=lease, wait=wait)
        return int(r["token"])

    def release(self, name: str, lease: int) -> None:
        self.call("lock_release", name=name, lease=lease)

    def holder(self, name: str) -> tuple[int | None, int | None]:
        """(lease, token) of the current holder of lock ``name``."""
        r = self.call("lock_holder", name=name)
        return r["lease"], r["token"]

    # elections
    def campaign(self, name: str, lease: int, value: Any, wait: float) -> int:
        r = self.call(
            "elect_campaign",
            timeout=wait + self.timeout,
            name=name,
            lease=lease,
            value=value,
            wait=wait,
        )
        return int(r["epoch"])

    def observe(self, name: str) -> tuple[Any, int | None]:
        r = self.call("elect_observe", name=name)
        return r["leader"], r["epoch"]

    def resign(self, name: str, lease: int) -> None:
        self.call("elect_resign", name=name, lease=lease)

    # registers
    def read(self, key: str) -> Any:
        return self.call("reg_read", key=key)["value"]

    def write(self, key: str, value: Any) -> None:
        self.call("reg_write", key=key, value=value)

    def cas(self, key: str, old: Any, new: Any) -> None:
        self.call("reg_cas", key=key, old=old, new=new)
