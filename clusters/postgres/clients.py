"""The ``postgres`` target's clients, one builder per workload and lock implementation
(``clusters.postgres.spec`` lists them). Every client talks to the primary, wherever it is,
so completions name no node (``spread=False``)."""

from __future__ import annotations

from clusters.postgres.guarded import UniqueKey, VersionCas
from clusters.postgres.holders import SessionLockClient, TableLockClient
from clusters.postgres.locks import AdvisoryLock, RowLock, TableLock
from workloads.factories import holder_clients
from workloads.guarded import guarded_clients

TABLE_LOCK = holder_clients(TableLockClient, TableLock, spread=False, driver_ttl=True)
ADVISORY_LOCK = holder_clients(SessionLockClient, AdvisoryLock, spread=False, driver_ttl=True)
ROW_LOCK = holder_clients(SessionLockClient, RowLock, spread=False, driver_ttl=True)
VERSION_CAS = guarded_clients(VersionCas)
UNIQUE_KEY = guarded_clients(UniqueKey)
