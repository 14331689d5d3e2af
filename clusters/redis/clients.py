"""The ``redis`` and ``redlock`` targets' clients, one builder per workload and lock
implementation: ``set-nx`` (``redis-py``'s lock with a watchdog) and ``redlock``. Neither
lock hands out fencing tokens. ``clusters.redis.spec`` lists them.
"""

from __future__ import annotations

from clusters.redis.discovery import RedisDiscovery
from clusters.redis.ids import RedisIncr
from clusters.redis.lock import RedlockLock, SetNxLock
from clusters.redis.register import RedisRegister
from workloads.common.factories import holder_clients, register_clients
from workloads.discovery import registry_clients
from workloads.ids.factories import id_clients, snowflake_clients
from workloads.lock.ttl import TtlLockClient

REGISTER = register_clients(RedisRegister)
SET_NX_LOCK = holder_clients(TtlLockClient, SetNxLock, driver_ttl=True)
REDLOCK_LOCK = holder_clients(TtlLockClient, RedlockLock, spread=False, driver_ttl=True)
INCR_IDS = id_clients(RedisIncr)
SNOWFLAKE_IDS = snowflake_clients(RedisIncr)
REGISTRY = registry_clients(RedisDiscovery)
