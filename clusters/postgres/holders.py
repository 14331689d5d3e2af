"""The lock workload's clients for the locks in the database.

``TableLockClient`` is ``workloads.lock.ttl``'s client (a lock that is its own lease, kept
by a watchdog) whose grant also carries the token the lock table handed out.
``SessionLockClient`` holds a lock that lives as long as its session (advisory, row): the
session is the lease, its id the server process id, kept from the server's idle timeout
by the keeper thread's pings on the same session (``clusters.postgres.locks``).
"""

from __future__ import annotations

from typing import Any, cast

from clusters.postgres.locks import SessionLock, TableLock
from workloads.common.holder import HolderClient
from workloads.common.lease import KeptLease, Lease, Session
from workloads.lock.ttl import TtlLockClient


class TableLockClient(TtlLockClient):
    """A ``TtlLockClient`` of the lock table: its holdings have fencing tokens."""

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        session, _ = super()._hold(name, value)
        return session, cast(TableLock, self.backend).granted_token


class SessionLockClient(HolderClient[SessionLock]):
    """One worker's client of a session lock: ``acquire`` / ``write`` / ``release``."""

    take_f = "acquire"
    give_f = "release"
    number_key = "token"

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        sent = self.ctx.clock.now()
        token = self.backend.acquire(name, self.wait)
        session = KeptLease(
            self.backend.session,
            self.ttl,
            self.keepalive,
            lambda lease: self.backend.ping(),
            self.events,
            name,
            sent,
            on_end=lambda: None,
        )
        return session, token

    def _unclaim(self, name: str, lease: Lease) -> None:
        self.backend.release(name)
