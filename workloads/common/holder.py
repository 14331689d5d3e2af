"""What lock and election clients share: a lease-backed holding with a fencing number.

A *holding* is taken (lock ``acquire``, election ``campaign``) under a fresh lease that a
keeper thread renews; it yields a fencing number (the lock token, the leader's epoch) that
every critical-section ``write`` carries to the protected resource; it is given up (lock
``release``, election ``resign``) by releasing it and revoking the lease. Subclasses say
how to take and give up on their backend (``_hold``, ``_unclaim``), and may add operations;
``LeaseHolderClient`` does the taking for backends that grant leases (``_claim`` under a
``LeaseSession``), ``workloads.lock.ttl`` for locks that are their own lease (Redis).

The name held is the client's ``name``, unless the take invocation's value is a dict with a
``"name"`` (a workload over several locks): the holding, its lease events and its writes
to the resource then use that name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from checkers.refusals import NOT_GRANTED
from core.client import Completion, Invocation, WorkerContext
from core.gen.replay import BEHIND
from workloads.common.backoff import Backoff
from workloads.common.critical import fenced_write
from workloads.common.lease import (
    EventLog,
    Lease,
    LeaseBackend,
    LeaseNotFound,
    LeaseSession,
    Session,
)
from workloads.common.resource import ResourceClient
from workloads.errors import OpFailed, OpUnknown


class Driver(Protocol):
    """The least a holder's backend is: a connection that can be closed."""

    def close(self) -> None: ...


B = TypeVar("B", bound=Driver)
LB = TypeVar("LB", bound=LeaseBackend)


class HolderClient(Generic[B]):
    """A ``core.client.Client`` whose operations are take / ``write`` / give up."""

    take_f: ClassVar[str]
    give_f: ClassVar[str]
    number_key: ClassVar[str]

    def __init__(
        self,
        ctx: WorkerContext,
        connect: Callable[[], B],
        resource: ResourceClient,
        name: str,
        ttl: float,
        keepalive: float,
        work: float,
        wait: float,
        node: str | None = None,
        check: bool = True,
    ) -> None:
        """``connect`` opens a new driver connection: one for this client, one per keeper
        thread. ``name`` is both the lock/election name and the resource name written to.
        ``check``: whether the holder checks its lease is not known lost before writing
        (``--holder-check``, ``workloads.common.critical``).
        """
        self.ctx, self._connect, self.resource = ctx, connect, resource
        self.name, self.ttl, self.keepalive, self.work, self.wait = name, ttl, keepalive, work, wait
        self.node, self.check = node, check
        self.backend: B = connect()
        self.events = EventLog(ctx)
        self.session: Session | None = None
        self.number: int | None = None
        self.held: str = name
        self.backoff = Backoff(seed=ctx.process)

    # --- what subclasses provide -------------------------------------------------------

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        """Take holding ``name``: return the session it is held under (its keeper running)
        and its fencing number, None for an implementation without one. Raise
        ``OpFailed``/``OpUnknown`` having let go of anything half-taken."""
        raise NotImplementedError

    def _unclaim(self, name: str, lease: Lease) -> None:
        """Give the holding up (the session is ended afterwards anyway)."""
        raise NotImplementedError

    def _other(self, inv: Invocation) -> Completion:
        """Operations beyond take / write / give up."""
        return Completion(
            "fail",
            error=f"unknown function {inv.f!r}; offered: {self.take_f}, write, {self.give_f}",
        )

    # --- the protocol ------------------------------------------------------------------

    def invoke(self, inv: Invocation) -> Completion:
        """One operation; while the service is unreachable, its failure is paced by the
        client's backoff (``workloads.common.backoff``)."""
        return self.backoff.run(lambda: self._do(inv), self.node)

    def _do(self, inv: Invocation) -> Completion:
        if inv.f == self.take_f:
            return self._take(inv.value)
        if inv.f == "write":
            return self._write(inv.value)
        if inv.f == self.give_f:
            return self._give_up()
        return self._other(inv)

    def close(self) -> None:
        self._end("closed")
        self.backend.close()
        self.resource.close()
        self.events.close()

    def _take(self, value: Any) -> Completion:
        if self.session is not None:
            return self._fail(f"already holding {self.held!r}")
        name = self._name_of(value)
        session, number = self._hold(name, value)
        self.session, self.number, self.held = session, number, name
        ok = {self.number_key: number, "lease": session.lease, "name": name}
        return Completion("ok", ok, node=self.node)

    def _write(self, value: Any) -> Completion:
        if self.session is None:
            return self._fail(f"not holding {self._name_of(value)!r}")
        work = self.work
        if isinstance(value, dict) and BEHIND in value:  # a replay catching up its schedule
            work = max(0.0, work - float(value[BEHIND]))
            value = {k: v for k, v in value.items() if k != BEHIND}
        c = fenced_write(
            self.resource,
            self.session,
            self.ctx.process,
            self.held,
            self.number,
            value,
            work,
            self.number_key,
            self.check,
        )
        return Completion(c.type, c.value, c.error, self.node)

    def _give_up(self) -> Completion:
        if self.session is None:
            return self._fail("not holding anything")
        try:
            self._unclaim(self.held, self.session.lease)
        except LeaseNotFound:
            self.session.mark_lost("the service no longer knows the lease (on release)")
            raise
        finally:
            self._end("released")
        return Completion("ok", node=self.node)

    def _end(self, why: str) -> None:
        if self.session is not None:
            self.session.end(why)
        self.session, self.number = None, None

    def _name_of(self, value: Any) -> str:
        """The name an invocation value asks for, else the client's."""
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return str(value["name"])
        return self.name

    def _fail(self, error: str) -> Completion:
        return Completion("fail", error=error, node=self.node)


class LeaseHolderClient(HolderClient[LB]):
    """A holder on a service that grants leases (etcd, Consul, ZooKeeper, sim): each
    holding gets a fresh ``LeaseSession`` and is claimed under it."""

    def _claim(self, name: str, lease: Lease, value: Any) -> int:
        """Take holding ``name`` under ``lease``; return its fencing number."""
        raise NotImplementedError

    def _hold(self, name: str, value: Any) -> tuple[Session, int | None]:
        session = LeaseSession(
            self.backend, self._connect, self.ttl, self.keepalive, self.events, name
        )
        try:
            number = self._claim(name, session.lease, value)
        except (OpFailed, OpUnknown):
            session.end(NOT_GRANTED)  # or maybe granted: either way, let it go
            raise
        return session, number
