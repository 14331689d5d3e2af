"""The watch workload's client factory for the targets with a driver
(``workloads.common.factories.Connector``): what a target's ``clients.py`` names for ``watch``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.client import Client, ClientFactory, WorkerContext
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.factories import Builder, Connector, connector
from workloads.register import RegisterOptions
from workloads.watch.client import WatchClient, WatchOptions


@dataclass(frozen=True, slots=True)
class WatchFactory:
    """Watch clients following ``keys`` keys over the connector's driver."""

    connector: Connector
    keys: int

    def __call__(self, ctx: WorkerContext) -> Client:
        connect, node = self.connector.for_slot(ctx.slot)
        return WatchClient(ctx, connect, self.keys, node)


def watch_clients(driver: Callable[..., Any], one_shot: bool = False) -> Builder:
    """Watch clients over ``driver`` connections; ``one_shot``: its watches fire once and
    the driver takes the run's ``--watch-mode`` (``mode=``)."""

    def build(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        mode = opts.record(WatchOptions).mode
        options: dict[str, Any] = {"mode": mode} if one_shot else {}
        keys = opts.record(RegisterOptions).keys
        return WatchFactory(connector(opts, cluster, driver, **options), keys)

    return build
