"""The PostgreSQL target: a primary with streaming replicas, in Docker or on SSH hosts.

Lock implementations (``--lock``), all in the database: ``table`` (a row per lock name
with its owner and expiry, tokens from a sequence), ``advisory`` (``pg_advisory_lock`` on
a session) and ``row`` (``SELECT ... FOR UPDATE`` held in an open transaction), and the
lock libraries ``LIBRARIES`` (tooz's advisory lock). The
lock-free workloads ``version-cas`` and ``unique-key`` do the same protected work with no
lock at all. ``persistence`` is the replication: ``async`` (the default) or ``sync``; with
``-failover`` the replica promotes itself when the primary is gone instead of the primary
being restarted as it was.
Clock faults are refused in Docker: the image runs the server without libfaketime.
"""

from __future__ import annotations

from clusters.spec import Offer, TargetSpec
from core.abilities import SERVER_ABILITIES, Ability
from workloads.libraries.registry import library_variants, unfenced_libraries

PERSISTENCE = ("async", "sync", "async-failover", "sync-failover")
"""The replication, first the default: what a COMMIT waits for (see ``server.py``), and
whether the replica takes over from a primary that is gone (``failover.py``)."""
CLIENTS = "clusters.postgres.clients"
LIBRARIES = ("tooz-postgresql",)
"""The lock libraries that run on PostgreSQL (``workloads.libraries.registry``)."""

SPEC = TargetSpec(
    name="postgres",
    description="PostgreSQL 17 primary with a streaming replica; locks in the database",
    default_nodes=2,
    offers={
        "lock": Offer(
            variants={
                "table": f"{CLIENTS}:TABLE_LOCK",
                "advisory": f"{CLIENTS}:ADVISORY_LOCK",
                "row": f"{CLIENTS}:ROW_LOCK",
                **library_variants(*LIBRARIES),
            },
            unfenced=unfenced_libraries(*LIBRARIES),
        ),
        "version-cas": Offer(f"{CLIENTS}:VERSION_CAS"),
        "unique-key": Offer(f"{CLIENTS}:UNIQUE_KEY"),
        "unique-ids": Offer(
            variants={
                "sequence": f"{CLIENTS}:SEQUENCE_IDS",
                "segment": f"{CLIENTS}:SEGMENT_IDS",
                "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS",
            }
        ),
    },
    server="clusters.postgres.server:SERVER",
    image="postgres",
    persistence=PERSISTENCE,
    abilities=SERVER_ABILITIES - {Ability.CLOCK},
    lacks={
        Ability.CLOCK: "the {target} image runs its server without libfaketime, so no "
        "{fault} fault in Docker; clock faults on {target} need real hosts (--ssh)"
    },
)
