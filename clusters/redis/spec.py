"""The ``redis`` and ``redlock`` targets, in Docker or on SSH hosts.

``redis`` (one primary): lock implementation ``set-nx``, the cas-register workload and
the registry workload (member keys with a TTL).
``redlock`` (five independent servers): lock implementation ``redlock``. Both offer the
lock libraries that run on them (``workloads.libraries.library_registry``) as lock variants. Their
locks claim no linearizability. Both servers run under libfaketime, so clock faults apply.
Partitions are refused: they cut links between servers, and these servers have none.
"""

from __future__ import annotations

from clusters.spec import DURING_POWER_LOSS, Offer, ServiceRule, TargetSpec, refused
from core.abilities import SERVER_ABILITIES, Ability
from workloads.libraries.library_registry import library_variants, unfenced_libraries

PERSISTENCE = ("none", "aof-everysec", "aof-always")
REDIS_LIBRARIES = ("redis-py", "python-redis-lock", "pottery-redlock", "tooz-redis")
"""The lock libraries that run on one Redis server."""
REDLOCK_LIBRARIES = ("pottery-redlock",)
"""The lock libraries that run on independent Redis servers (Redlock's)."""
CLIENTS = "clusters.redis.clients"
NO_NETWORK = (SERVER_ABILITIES - {Ability.NETWORK}) | {Ability.POWER_LOSS}
"""Every server ability but partitions, and power loss (its image has the layer)."""
NOTIFICATIONS = (
    "keyspace notifications, fire-and-forget pub/sub (no revision to resume from, and a "
    "subscriber disconnected for a moment, or too slow for its output buffer, loses the "
    "changes of that moment for good)"
)
NO_WATCH = {
    "watch": refused(
        f"its only change feed is {NOTIFICATIONS}, so there is no delivery promise to test"
    ),
    "herd": refused(
        f"a waiter could only wait on {NOTIFICATIONS}, and Redis keeps no ordered queue "
        "of waiters (SET NX waiters poll), so there is no notification per handoff to count"
    ),
}
"""The notification workloads Redis does not offer, and why."""
NO_PARTITION = {
    Ability.NETWORK: "no {fault} faults on {target}: its servers never talk to each other "
    "and the clients reach every server, so a partition between servers would change "
    "nothing; use pause, kill, clock or client-pause",
}

PERSISTENCE_DOC = "https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/"
RULES = (
    ServiceRule(
        "appendfsync",
        "everysec",
        None,
        "Redis fsyncs the append-only file about once a second, after answering: a write "
        "acknowledged within the last second (up to 2 s when an fsync is slow) before the "
        "machine loses power may be lost ('you may lose 1 second of data')",
        PERSISTENCE_DOC,
        when={"persistence": ("aof-everysec",), **DURING_POWER_LOSS},
        lost_within_s=2.0,
    ),
    ServiceRule(
        "appendfsync",
        "always",
        None,
        "Redis fsyncs the append-only file before it answers a write: a power cut loses "
        "nothing it acknowledged",
        PERSISTENCE_DOC,
        when={"persistence": ("aof-always",), **DURING_POWER_LOSS},
        lost_within_s=0.0,
    ),
)
"""What a power cut may take under each fsync setting (``checkers.durability``)."""

REDIS = TargetSpec(
    name="redis",
    description="one Redis 8.0 primary (built with libc malloc); SET NX PX locks",
    default_nodes=1,
    offers={
        "lock": Offer(
            variants={"set-nx": f"{CLIENTS}:SET_NX_LOCK", **library_variants(*REDIS_LIBRARIES)},
            unfenced=("set-nx", *unfenced_libraries(*REDIS_LIBRARIES)),
        ),
        "cas-register": Offer(f"{CLIENTS}:REGISTER"),
        "registry": Offer(f"{CLIENTS}:REGISTRY"),
        "unique-ids": Offer(
            variants={"incr": f"{CLIENTS}:INCR_IDS", "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS"}
        ),
        **NO_WATCH,
    },
    server="clusters.redis.server:REDIS",
    image="redis",
    persistence=PERSISTENCE,
    abilities=NO_NETWORK,
    lacks=NO_PARTITION,
    rules=RULES,
)

REDLOCK = TargetSpec(
    name="redlock",
    description="five independent Redis 8.0 servers for the Redlock algorithm",
    default_nodes=5,
    offers={
        "lock": Offer(
            variants={"redlock": f"{CLIENTS}:REDLOCK_LOCK", **library_variants(*REDLOCK_LIBRARIES)},
            unfenced=("redlock", *unfenced_libraries(*REDLOCK_LIBRARIES)),
        ),
        **NO_WATCH,
    },
    server="clusters.redis.server:REDLOCK",
    image="redis",
    persistence=PERSISTENCE,
    abilities=NO_NETWORK,
    lacks=NO_PARTITION,
    rules=RULES,
)
