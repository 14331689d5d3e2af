"""The PostgreSQL target: a primary with streaming replicas, in Docker or on SSH hosts.

Lock implementations (``--lock``), all in the database: ``table`` (a row per lock name
with its owner and expiry, tokens from a sequence), ``advisory`` (``pg_advisory_lock`` on
a session) and ``row`` (``SELECT ... FOR UPDATE`` held in an open transaction), and the
lock libraries ``LIBRARIES`` (tooz's advisory lock). The
lock-free workloads ``version-cas`` and ``unique-key`` do the same protected work with no
lock at all. ``persistence`` is the replication: ``async`` (the default) or ``sync``; with
``-failover`` the replica promotes itself when the primary is gone instead of the primary
being restarted as it was; or, with async replication, the primary's own durability turned
down: ``no-sync-commit`` (``synchronous_commit = off``) or ``no-fsync`` (``fsync = off``),
what a power cut may then take said by ``RULES``.
Clock faults are refused in Docker: the image runs the server without libfaketime.
"""

from __future__ import annotations

from clusters.spec import DURING_POWER_LOSS, KERNEL_WRITEBACK_S, Offer, ServiceRule, TargetSpec
from core.abilities import SERVER_ABILITIES, Ability
from workloads.libraries.library_registry import library_variants, unfenced_libraries

PERSISTENCE = ("async", "sync", "async-failover", "sync-failover", "no-sync-commit", "no-fsync")
"""The replication, first the default: what a COMMIT waits for (see ``server.py``), and
whether the replica takes over from a primary that is gone (``failover.py``); the last two
keep async replication and turn the primary's WAL flush off at COMMIT or altogether."""
CLIENTS = "clusters.postgres.clients"
LIBRARIES = ("tooz-postgresql",)
"""The lock libraries that run on PostgreSQL (``workloads.libraries.library_registry``)."""

ASYNC_COMMIT_DOC = "https://www.postgresql.org/docs/17/wal-async-commit.html"
FSYNC_DOC = "https://www.postgresql.org/docs/17/runtime-config-wal.html#GUC-FSYNC"
WAL_WRITER_DELAY_S = 0.2
"""``wal_writer_delay``'s default: the WAL writer flushes every 200 ms."""
RULES = (
    ServiceRule(
        "synchronous_commit",
        "on",
        None,
        "the primary answers a COMMIT once its WAL record is flushed to disk: a power cut "
        "loses no acknowledged commit",
        ASYNC_COMMIT_DOC,
        when={"persistence": (None, "async", "sync"), **DURING_POWER_LOSS},
        lost_within_s=0.0,
    ),
    ServiceRule(
        "synchronous_commit",
        "off",
        "on",
        "the primary answers a COMMIT before its WAL record is flushed; the WAL writer "
        f"flushes every wal_writer_delay ({WAL_WRITER_DELAY_S * 1000:g} ms), so a power cut "
        f"may lose the commits of the last {3 * WAL_WRITER_DELAY_S:g} s ('three times "
        "wal_writer_delay'), and the database stays consistent",
        ASYNC_COMMIT_DOC,
        when={"persistence": ("no-sync-commit",), **DURING_POWER_LOSS},
        lost_within_s=3 * WAL_WRITER_DELAY_S,
    ),
    ServiceRule(
        "fsync",
        "off",
        "on",
        "PostgreSQL never fsyncs: a power cut may lose acknowledged commits, those the "
        f"kernel had not written back (Linux's defaults: up to {KERNEL_WRITEBACK_S:g} s old), and "
        "may leave 'unrecoverable data corruption'",
        FSYNC_DOC,
        when={"persistence": ("no-fsync",), **DURING_POWER_LOSS},
        lost_within_s=KERNEL_WRITEBACK_S,
    ),
)
"""What a power cut may take of what the primary acknowledged under each setting
(``checkers.durability``); a failover's loss is replication's, not said here."""

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
    abilities=(SERVER_ABILITIES - {Ability.CLOCK}) | {Ability.POWER_LOSS},
    rules=RULES,
    lacks={
        Ability.CLOCK: "the {target} image runs its server without libfaketime, so no "
        "{fault} fault in Docker; clock faults on {target} need real hosts (--ssh)"
    },
)
