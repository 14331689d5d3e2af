"""The registry workload's client: service instances that register themselves and keep
their registration alive, and discovery clients that list the live ones.

A worker is an *instance* when its thread is one of the first ``instances`` (its member
name is ``i<process>``: a restarted instance is a new member), else a *discovery client*.

Operations:

- ``register`` (instance): register the member with the service's mechanism (an etcd key
  on a lease, a ZooKeeper ephemeral node, a Consul service with a TTL check, a sim key on a
  lease) and renew it from a keeper thread every ``--keepalive`` s -> ok
  ``{"member": m, "lease": id, "ttl": s, "grace": s}`` (``grace``: how long past the TTL the
  service documents it may still list a dead member, its backend's ``GRACE``).
- ``heartbeat`` (instance): the instance's own liveness, answered without the service ->
  ok ``{"member": m, "registered": bool}`` (False once the keeper noticed the
  registration gone: the next op registers again). A frozen or killed instance answers
  none: the harness observes its death by the missing heartbeats.
- ``list`` (discovery): the members the service lists as live -> ok ``{"members": [...]}``
  with the node asked; a read changes nothing, so any failure of it is a ``fail``.

The keeper records its lease events (``lease-granted``, ``keepalive``, ``lease-lost``...,
``workloads.common.lease``) with the member as their ``lock``, and so does a backend that reports
its session's connection (``session-state``: a ZooKeeper session that moved to another
server when its own was lost, which keeps the registration alive).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from core.client import Client, ClientFactory, Completion, Invocation, WorkerContext
from core.cluster import Cluster
from core.option_checks import Bound
from core.option_records import option
from core.options import RunOptions
from workloads.common.backoff import Backoff
from workloads.common.factories import Connector, connector
from workloads.common.lease import EventLog, KeptLease, Lease, SharedConnection, record_states
from workloads.common.lock_options import LockOptions
from workloads.errors import OpFailed, OpUnknown


@dataclass(frozen=True, slots=True)
class DiscoveryOptions:
    """Service registration: the first ``instances`` client processes register
    themselves, the others list the live instances (``opts.record(DiscoveryOptions)``)."""

    instances: int = option(
        2,
        "the client processes that register themselves (the others list them; default: "
        "%(default)s, or all clients but one)",
        bound=Bound("--instances", 1, 1000, integer=True, unit="instances"),
        shares="discovery client",
    )


class RegistryBackend(Protocol):
    """A driver offering self-registration on a TTL and the listing of live members."""

    GRACE: float
    """Seconds past the TTL the service may list a dead member, as documented (with its
    source, in the backend's docstring)."""

    def register(self, member: str, ttl: float) -> Lease:
        """Register ``member`` for ``ttl`` s; the handle its renewals take."""
        ...

    def keepalive(self, lease: Lease) -> float:
        """Renew; ``workloads.common.lease.LeaseNotFound`` when the registration is gone."""
        ...

    def revoke(self, lease: Lease) -> None:
        """Deregister, best effort."""
        ...

    def members(self) -> list[str]:
        """The members the service lists as live now."""
        ...

    def close(self) -> None: ...


class InstanceClient:
    """A service instance: ``register`` / ``heartbeat``."""

    def __init__(
        self,
        ctx: WorkerContext,
        connect: Callable[[], RegistryBackend],
        node: str | None,
        ttl: float,
        keepalive: float,
    ) -> None:
        self.ctx, self._connect, self.node = ctx, connect, node
        self.ttl, self.interval = ttl, keepalive
        self.member = f"i{ctx.process}"
        self.backend = connect()
        self.events = EventLog(ctx)
        record_states(self.backend, self.events, self.member)
        self.session: KeptLease | None = None
        self.backoff = Backoff(seed=ctx.process)

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == "heartbeat":
            registered = self.session is not None and not self.session.lost
            return Completion("ok", {"member": self.member, "registered": registered})
        if inv.f == "register":
            return self.backoff.run(self._register, self.node)
        return Completion(
            "fail", error=f"unknown function {inv.f!r}; an instance offers register, heartbeat"
        )

    def _register(self) -> Completion:
        self._end("lost")
        sent = self.ctx.clock.now()
        lease = self.backend.register(self.member, self.ttl)
        backend = self.backend
        keeper = backend.shared() if isinstance(backend, SharedConnection) else self._connect()
        self.session = KeptLease(
            lease,
            self.ttl,
            self.interval,
            keeper.keepalive,
            self.events,
            self.member,
            sent,
            on_end=lambda: _revoke(backend, keeper, lease),
        )
        value = {"member": self.member, "lease": str(lease), "ttl": self.ttl}
        return Completion("ok", {**value, "grace": backend.GRACE}, node=self.node)

    def _end(self, why: str) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.end(why)

    def close(self) -> None:
        self._end("closed")
        self.backend.close()
        self.events.close()


def _revoke(backend: RegistryBackend, keeper: Any, lease: Lease) -> None:
    """Deregister; one that fails leaves a registration that simply expires."""
    if keeper is not backend:
        keeper.close()
    try:
        backend.revoke(lease)
    except (OpFailed, OpUnknown):
        pass


class DiscoveryClient:
    """A discovery client: ``list``."""

    def __init__(self, connect: Callable[[], RegistryBackend], node: str | None) -> None:
        self.backend, self.node = connect(), node

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f != "list":
            return Completion("fail", error=f"unknown function {inv.f!r}; discovery offers list")
        try:
            members = sorted(self.backend.members())
        except (OpFailed, OpUnknown) as e:
            return Completion("fail", error=str(e), node=self.node)
        return Completion("ok", {"members": members}, node=self.node)

    def close(self) -> None:
        self.backend.close()


@dataclass(frozen=True, slots=True)
class RegistryFactory:
    """Instances on the first ``instances`` threads, discovery clients on the others."""

    connector: Connector
    instances: int
    ttl: float
    keepalive: float

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connector.for_slot(ctx.slot)
        if ctx.slot < self.instances:
            return InstanceClient(ctx, connect, node, self.ttl, self.keepalive)
        return DiscoveryClient(connect, node)


def registry_clients(
    driver: Callable[..., Any],
) -> Callable[[RunOptions, Cluster, str | None], ClientFactory]:
    """The registry workload's clients over ``driver`` connections (a ``RegistryBackend``
    taking ``(addresses, timeout=, prefix=)``)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        lease = opts.record(LockOptions)
        return RegistryFactory(
            connector(opts, cluster, driver),
            opts.record(DiscoveryOptions).instances,
            lease.lease_ttl,
            lease.keepalive,
        )

    return build
