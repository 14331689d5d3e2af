"""Picklable client factories for the targets, the sim's too: what the runner sends to
each worker.

A target says how to connect (a ``Connector``: its driver class, the cluster's endpoints and
the driver's options) and which client class runs the workload; these factories do the
rest inside the worker, the same way for every target:

- the worker's process id picks the node it talks to (``process mod nodes``, so clients
  spread over the members, as Jepsen binds each client to a node); the driver gets every
  address, that node's first, for drivers that fail over (ZooKeeper) or need them all
  (Redlock);
- ``HolderFactory`` builds a lock or election client (``workloads.lock``,
  ``workloads.election``, ``workloads.lock.ttl``) with the run's lease, keepalive, work and
  wait times and the protected resource;
- ``RegisterFactory`` builds a ``workloads.register.RegisterClient``.

``holder_clients`` and ``register_clients`` make the ``ClientBuilder``s a target's table
lists (``clusters.spec.TargetSpec``): from the run's options and cluster to a factory.
Every driver takes ``(addresses, timeout=, prefix=)`` plus its own options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from core.client import Client, ClientFactory, WorkerContext
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.holder import HolderClient
from workloads.common.lock_options import LockOptions
from workloads.common.resource import ResourceClient
from workloads.register import RegisterClient, RegisterOptions

REQUEST_TIMEOUT = 5.0
"""Seconds a single request may wait for its answer (capped by ``--op-timeout``)."""


@dataclass(frozen=True, slots=True)
class Connector:
    """How a worker connects: ``driver(addresses, **options)`` opens one connection.

    ``spread``: whether a client talks to one node (its completions name it) or to all of
    them at once (Redlock: completions name no node).
    """

    driver: Callable[..., Any]
    endpoints: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, Any], ...] = ()
    spread: bool = True

    @classmethod
    def of(
        cls,
        endpoints: Mapping[str, str],
        driver: Callable[..., Any],
        spread: bool = True,
        **options: Any,
    ) -> Connector:
        """A connector to a cluster's ``endpoints()`` (node -> "ip:port")."""
        return cls(driver, tuple(sorted(endpoints.items())), tuple(sorted(options.items())), spread)

    def for_slot(self, slot: int) -> tuple[Callable[[], Any], str | None]:
        """The connection maker for a worker of ``slot`` (``WorkerContext.slot``: its
        thread) and the node it talks to."""
        i = slot % len(self.endpoints)
        rotated = self.endpoints[i:] + self.endpoints[:i]
        addresses = [address for _, address in rotated]
        node = rotated[0][0] if self.spread else None
        return partial(self.driver, addresses, **dict(self.options)), node


@dataclass(frozen=True, slots=True)
class HolderFactory:
    """Lock or election clients of class ``client`` (a ``HolderClient`` subclass)."""

    client: type[HolderClient[Any]]
    connector: Connector
    resource: str
    name: str
    ttl: float
    keepalive: float
    work: float
    wait: float
    timeout: float = REQUEST_TIMEOUT
    check: bool = True
    """Whether holders check their lease before writing (``--holder-check``)."""

    @classmethod
    def for_run(
        cls,
        opts: RunOptions,
        client: type[HolderClient[Any]],
        connector: Connector,
        resource: str | None,
        name: str = "lock",
    ) -> HolderFactory:
        """The factory for a run's options (lease TTL, keepalive, work time, acquire wait,
        holder check)."""
        if resource is None:
            raise ValueError("lock and election clients need the protected resource's address")
        lock = opts.record(LockOptions)
        return cls(
            client,
            connector,
            resource,
            name,
            lock.lease_ttl,
            lock.keepalive,
            lock.work_time,
            lock.acquire_wait,
            request_timeout(opts),
            lock.holder_check,
        )

    def connect_for(self, ctx: WorkerContext) -> tuple[Callable[[], Any], str | None]:
        """The connection maker of worker ``ctx`` and the node it talks to."""
        return self.connector.for_slot(ctx.slot)

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connect_for(ctx)
        return self.client(
            ctx,
            connect,
            ResourceClient(self.resource, self.timeout),
            self.name,
            self.ttl,
            self.keepalive,
            self.work,
            self.wait,
            node,
            self.check,
        )


@dataclass(frozen=True, slots=True)
class RegisterFactory:
    """CAS-register clients; a read that fails in any way is a ``fail`` unless
    ``definite_reads`` is False (the sim's: ``workloads.register.client``)."""

    connector: Connector
    definite_reads: bool = True

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connector.for_slot(ctx.slot)
        return RegisterClient(ctx, connect, node, definite_reads=self.definite_reads)


Builder = Callable[[RunOptions, Cluster, "str | None"], ClientFactory]


def connector(
    opts: RunOptions,
    cluster: Cluster,
    driver: Callable[..., Any],
    spread: bool = True,
    **options: Any,
) -> Connector:
    """The run's connector to ``cluster``: request timeout and key prefix included."""
    return Connector.of(
        cluster.endpoints(),
        driver,
        spread,
        timeout=request_timeout(opts),
        prefix=run_prefix(cluster),
        **options,
    )


def holder_clients(
    client: type[HolderClient[Any]],
    driver: Callable[..., Any],
    name: str = "lock",
    spread: bool = True,
    driver_ttl: bool = False,
) -> Builder:
    """Lock or election clients of class ``client`` over ``driver`` connections;
    ``driver_ttl``: the driver also takes the lease TTL (``ttl=``: a lock that is its own
    lease)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        extra = {"ttl": opts.record(LockOptions).lease_ttl} if driver_ttl else {}
        return HolderFactory.for_run(
            opts, client, connector(opts, cluster, driver, spread, **extra), resource, name
        )

    return build


def register_clients(driver: Callable[..., Any], definite_reads: bool = True) -> Builder:
    """CAS-register clients over ``driver`` connections (which take ``read_mode=``)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        read_mode = opts.record(RegisterOptions).read_mode
        return RegisterFactory(
            connector(opts, cluster, driver, read_mode=read_mode), definite_reads
        )

    return build


def request_timeout(opts: RunOptions) -> float:
    """The per-request answer timeout of a run's drivers."""
    return min(opts.op_timeout, REQUEST_TIMEOUT)


def run_prefix(cluster: object) -> str:
    """The key prefix of one run (its cluster's run id), so runs never share keys."""
    return f"harness-{getattr(cluster, 'run_id', 'run')}"
