"""The ``postgres`` target's clients, one builder per workload and lock implementation
(``clusters.postgres.spec`` lists them). Every client talks to the primary, wherever it is,
so completions name no node (``spread=False``)."""

from __future__ import annotations

from clusters.postgres.guarded import UniqueKey, VersionCas
from clusters.postgres.holders import SessionLockClient, TableLockClient
from clusters.postgres.ids import PgSegments, PgSequence
from clusters.postgres.locks import AdvisoryLock, RowLock, TableLock
from core.client import ClientFactory
from core.cluster import Cluster
from core.options import RunOptions
from workloads.common.factories import connector, holder_clients
from workloads.guarded import guarded_clients
from workloads.ids import IdsOptions
from workloads.ids.factories import IdFactory, id_clients, snowflake_clients

TABLE_LOCK = holder_clients(TableLockClient, TableLock, spread=False, driver_ttl=True)
ADVISORY_LOCK = holder_clients(SessionLockClient, AdvisoryLock, spread=False, driver_ttl=True)
ROW_LOCK = holder_clients(SessionLockClient, RowLock, spread=False, driver_ttl=True)
VERSION_CAS = guarded_clients(VersionCas)
UNIQUE_KEY = guarded_clients(UniqueKey)
SEQUENCE_IDS = id_clients(PgSequence, spread=False)
SNOWFLAKE_IDS = snowflake_clients(PgSequence, spread=False)


def SEGMENT_IDS(opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
    """Leaf-segment clients, ``--segment-size`` ids a range, the next at ``--segment-prefetch``."""
    seg = opts.record(IdsOptions)
    return IdFactory(
        connector(
            opts, cluster, PgSegments, False, size=seg.segment_size, prefetch=seg.segment_prefetch
        )
    )
