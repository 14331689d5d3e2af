"""The unique-ids workload's client factories (what the runner sends to each worker) and
the ``ClientBuilder``s of a target's id generators (the variants of its offer of the
workload, ``clusters.spec.Offer``): ids from a target's generator (``id_clients``) or
Snowflake ids made in the client (``snowflake_clients``), whose clock the client-clock
fault can move (``workloads.wall_clock``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.client import Client, ClientFactory, WorkerContext
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.factories import Builder, Connector, connector
from workloads.ids.client import IdBackend, IdClient, IdsOptions, SnowflakeIds
from workloads.wall_clock import WallClock, clock_file


@dataclass(frozen=True, slots=True)
class IdFactory:
    """Id clients over the target's generator."""

    connector: Connector

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connector.for_slot(ctx.slot)
        return IdClient(ctx, connect, node)


@dataclass(frozen=True, slots=True)
class SnowflakeFactory:
    """Snowflake clients; ``workers`` None: fixed worker ids (the thread), else the
    connector of the target's generator that hands them out."""

    defence: str
    workers: Connector | None = None

    def __call__(self, ctx: WorkerContext) -> Client:
        clock = WallClock(clock_file(ctx.events_path))
        if self.workers is None:
            return IdClient(ctx, lambda: SnowflakeIds(lambda: ctx.slot, self.defence, clock))
        connect, node = self.workers.for_slot(ctx.slot)
        return IdClient(ctx, lambda: SnowflakeIds(_taken(connect), self.defence, clock), node)


def _taken(connect: Callable[[], IdBackend]) -> Callable[[], int]:
    """A worker id taken from a service's generator (one connection, closed after)."""

    def take() -> int:
        backend = connect()
        try:
            return backend.next_id()
        finally:
            backend.close()

    return take


def id_clients(driver: Callable[..., IdBackend], spread: bool = True) -> Builder:
    """Id clients over ``driver`` connections (``driver(addresses, timeout=, prefix=)``);
    ``spread``: each client talks to its own node (else all to the first answering)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        return IdFactory(connector(opts, cluster, driver, spread))

    return build


def snowflake_clients(workers: Callable[..., IdBackend], spread: bool = True) -> Builder:
    """Snowflake clients; with ``--snowflake-workers service`` their worker ids come from
    ``workers`` connections (the target's own generator)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        ids = opts.record(IdsOptions)
        if ids.snowflake_workers == "fixed":
            return SnowflakeFactory(ids.snowflake_defence)
        return SnowflakeFactory(ids.snowflake_defence, connector(opts, cluster, workers, spread))

    return build
