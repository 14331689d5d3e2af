"""The etcd target: etcd 3.5 in Docker or on SSH hosts.

Lock implementations (``--lock``): ``lease-lock`` (default: etcd's lock service) and
``recipe`` (the client-side recipe), and the lock libraries ``LIBRARIES``. Read modes
(``--read-mode``, cas-register): ``linearizable`` (default) and ``serializable``. Lease
TTLs are whole seconds on etcd, and at least 2 (etcd silently raises shorter ones to its
minimum, which would make the recorded TTL a lie), so other values are refused up front.
etcd is a Go program: no clock faults in Docker. Persistence (``--persistence``):
``fsync`` (etcd's default) or ``no-fsync`` (``--unsafe-no-fsync``); what a power cut may
take under each is in ``DURABILITY``, and the power-loss fault shows it.
"""

from __future__ import annotations

from clusters.spec import (
    DURING_POWER_LOSS,
    KERNEL_WRITEBACK_S,
    NO_GO_CLOCK,
    LeaseTtl,
    Offer,
    ServiceRule,
    TargetSpec,
    variants,
)
from core.abilities import SERVER_ABILITIES, Ability
from workloads.herd import RECIPES
from workloads.libraries.library_registry import library_variants, unfenced_libraries

MIN_TTL = 2
"""Seconds: the shortest lease etcd grants as asked."""
READ_MODES = ("linearizable", "serializable")
CLIENTS = "clusters.etcd.clients"
LIBRARIES = ("tooz-etcd3gw", "etcd3gw")
"""The lock libraries that run on etcd, over its gRPC gateway (``workloads.libraries``)."""
PERSISTENCE = ("fsync", "no-fsync")
"""etcd's WAL fsynced before a write is acknowledged (its default), or not."""

GUARANTEES_DOC = "https://etcd.io/docs/v3.5/learning/api_guarantees/#durability"
"""etcd's API guarantees: 'Any completed operations are durable.'"""
NO_FSYNC_DOC = "https://github.com/etcd-io/etcd/blob/main/CHANGELOG/CHANGELOG-3.5.md"
"""etcd 3.5's changelog, which added ``--unsafe-no-fsync``: 'Setting the flag disables all
uses of fsync, which is unsafe and will cause data loss' (and ``etcd --help``: 'Disables
fsync, unsafe, will cause data loss.', among the unsafe features that 'may break the
guarantees given by the consensus protocol')."""
DURABILITY = (
    ServiceRule(
        "--unsafe-no-fsync",
        "false",
        None,
        "every member fsyncs its WAL before it acknowledges a Raft entry, and an operation "
        "is complete once a quorum has: a power cut of every member loses nothing "
        "acknowledged ('Any completed operations are durable')",
        GUARANTEES_DOC,
        when={"persistence": (None, "fsync"), **DURING_POWER_LOSS},
        lost_within_s=0.0,
    ),
    ServiceRule(
        "--unsafe-no-fsync",
        "true",
        "false",
        "etcd never fsyncs its WAL or database ('disables all uses of fsync, which is unsafe "
        "and will cause data loss'); it still writes them, so a power cut of a quorum may "
        "lose what the kernel had not written back, acknowledged writes, leases and the "
        "revisions fencing tokens are made of (Linux's defaults: up to "
        f"{KERNEL_WRITEBACK_S:g} s old)",
        NO_FSYNC_DOC,
        when={"persistence": ("no-fsync",), **DURING_POWER_LOSS},
        lost_within_s=KERNEL_WRITEBACK_S,
    ),
)
"""What a power cut may take under each fsync setting (``checkers.durability``)."""

SPEC = TargetSpec(
    name="etcd",
    description="etcd 3.5 (Debian trixie), Raft; locks via leases, CAS via txn",
    default_nodes=3,
    offers={
        "lock": Offer(
            variants={
                "lease-lock": f"{CLIENTS}:LEASE_LOCK",
                "recipe": f"{CLIENTS}:RECIPE_LOCK",
                **library_variants(*LIBRARIES),
            },
            unfenced=unfenced_libraries(*LIBRARIES),
        ),
        # threads: partition and kill runs valid with them (issue 36)
        "cas-register": variants(f"{CLIENTS}:REGISTER", READ_MODES, threads=True),
        "election": Offer(f"{CLIENTS}:ELECTION"),
        "registry": Offer(f"{CLIENTS}:REGISTRY"),
        "version-cas": Offer(f"{CLIENTS}:VERSION_CAS"),
        "unique-ids": Offer(
            variants={
                "counter": f"{CLIENTS}:COUNTER_IDS",
                "revision": f"{CLIENTS}:REVISION_IDS",
                "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS",
            }
        ),
        "herd": variants(f"{CLIENTS}:HERD", RECIPES),
        "watch": Offer(f"{CLIENTS}:WATCH"),
    },
    server="clusters.etcd.server:SERVER",
    image="etcd",
    checks=(LeaseTtl(MIN_TTL, whole=True),),
    linearizable_locks=True,
    persistence=PERSISTENCE,
    abilities=(SERVER_ABILITIES - {Ability.CLOCK}) | {Ability.POWER_LOSS},
    rules=DURABILITY,
    lacks=NO_GO_CLOCK,
)
