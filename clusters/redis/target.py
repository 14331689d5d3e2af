"""The ``redis`` and ``redlock`` targets as a run sees them: clusters and clients.

``redis`` (one primary): lock implementation ``set-nx`` (``redis-py``'s lock with a
watchdog) and the cas-register workload. ``redlock`` (five independent servers): lock
implementation ``redlock``. Neither lock hands out fencing tokens. Both servers run under
libfaketime, so clock faults apply. Partitions are refused: they cut links between
servers, and these servers have none.
"""

from __future__ import annotations

from clusters.docker_target import DockerTarget
from clusters.redis.lock import RedlockLock, SetNxLock
from clusters.redis.register import RedisRegister
from core.abilities import SERVER_ABILITIES, Ability
from workloads.factories import holder_clients, register_clients
from workloads.ttl_lock import TtlLockClient

NO_NETWORK = SERVER_ABILITIES - {Ability.NETWORK}
NO_PARTITION = {
    Ability.NETWORK: "no {fault} faults on {target}: its servers never talk to each other "
    "and the clients reach every server, so a partition between servers would change "
    "nothing; use pause, kill, clock or client-pause",
}

TARGET = DockerTarget(
    name="redis",
    abilities=NO_NETWORK,
    lacks=NO_PARTITION,
    workload_clients={"cas-register": register_clients(RedisRegister)},
    lock_clients={"set-nx": holder_clients(TtlLockClient, SetNxLock, driver_ttl=True)},
    default_lock="set-nx",
)

REDLOCK = DockerTarget(
    name="redlock",
    abilities=NO_NETWORK,
    lacks=NO_PARTITION,
    workload_clients={},
    lock_clients={
        "redlock": holder_clients(TtlLockClient, RedlockLock, spread=False, driver_ttl=True),
    },
    default_lock="redlock",
)
